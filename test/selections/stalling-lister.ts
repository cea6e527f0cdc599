import type { ServerResponse } from 'node:http'
import { sendJson, type SeenRequest } from '../connectors/http/upstream-server.js'

/**
 * An `items` list two records a page (the cursor a page number) whose pages after the first can be made to fail:
 * `down` answers them 503, `slow` holds them until `release()` (after the walk answered: its deadline ran out), `up`
 * answers every page.
 */
export function stallingLister(items: readonly { readonly id: string }[]) {
  const state = { mode: 'up' as 'up' | 'down' | 'slow' }
  const held: ServerResponse[] = []
  const handler = (req: SeenRequest, res: ServerResponse) => {
    const page = Number(req.url.searchParams.get('cursor') ?? 0)
    if (page >= 1 && state.mode === 'down') return sendJson(res, 503, { error: 'down' })
    if (page >= 1 && state.mode === 'slow') return void held.push(res)
    sendJson(res, 200, { items: items.slice(page * 2, page * 2 + 2), next_cursor: (page + 1) * 2 < items.length ? String(page + 1) : null })
  }
  const release = () => {
    for (const res of held.splice(0)) sendJson(res, 200, { items: [], next_cursor: null })
    state.mode = 'up'
  }
  return { state, handler, release }
}
