import assert from 'node:assert/strict'
import { delay, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { type McpWorld, startSlowDocsWorld } from './support.js'

/**
 * An endless list at `/docs` for `startSlowDocsWorld`: page `after` holds records after*n .. after*n+n-1 and names
 * the next; each page waits `pageMs`, so a walk of thousands of them outlasts any test.
 */
export function startEndlessDocs(pageMs: number): Promise<TestUpstream> {
  return startUpstream(async (req, res) => {
    if (req.url.pathname !== '/docs') return sendJson(res, 404, { error: 'no such list' })
    await delay(pageMs)
    const at = Number(req.url.searchParams.get('after') ?? '0')
    const n = Number(req.url.searchParams.get('n') ?? '2')
    const data = Array.from({ length: n }, (_, i) => ({ id: `d${at * n + i}`, state: 'open', rev: 1 }))
    if (!res.destroyed) sendJson(res, 200, { data, next: String(at + 1) })
  })
}

/** Polls `what` every 20 ms until it holds; fails naming `label` after `ms`. */
export async function until(what: () => boolean | Promise<boolean>, ms: number, label: string): Promise<void> {
  const end = Date.now() + ms
  while (!(await what())) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${label}`)
    await delay(20)
  }
}

export interface EndlessDocsWorld {
  readonly world: McpWorld
  readonly upstream: TestUpstream
  close(): Promise<void>
}

/** `startSlowDocsWorld` over {@link startEndlessDocs}; `close()` closes both. */
export async function startEndlessDocsWorld(pageMs: number): Promise<EndlessDocsWorld> {
  const upstream = await startEndlessDocs(pageMs)
  const world = await startSlowDocsWorld(upstream.origin)
  return {
    world,
    upstream,
    async close() {
      await world.close()
      await upstream.close()
    },
  }
}
