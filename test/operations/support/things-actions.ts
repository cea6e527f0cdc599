import { startUpstream, sendJson, type TestUpstream } from '../../connectors/http/upstream-server.js'

export interface Item {
  id: string
  status: string
  /** not a field: its ETag */
  rev: number
}

const shown = (item: Item) => ({ id: item.id, status: item.status })
const etag = (item: Item) => ({ etag: `"${item.rev}"` })

/**
 * A loopback API whose writes are action endpoints: `DELETE /items/{id}` (a soft delete: status → closed, whatever
 * the body), `POST /items/{id}/close` (closes, whatever the body), `POST /items/{id}/set` (sets the body's status),
 * and a plain `PATCH /items/{id}` (sets the body's status).
 */
export async function startItemsUpstream(count: number): Promise<TestUpstream & { items: Map<string, Item> }> {
  const items = new Map<string, Item>()
  for (let i = 1; i <= count; i++) items.set(`i${i}`, { id: `i${i}`, status: 'open', rev: 1 })
  const up = await startUpstream((req, res) => {
    if (req.method === 'GET' && req.url.pathname === '/items') return sendJson(res, 200, { items: [...items.values()].map((i) => ({ ...shown(i), ...etag(i) })), next: null })
    const m = /^\/items\/([^/]+)(?:\/(close|set))?$/.exec(req.url.pathname)
    const item = m ? items.get(decodeURIComponent(m[1]!)) : undefined
    if (!item) return sendJson(res, 404, { error: 'not found' })
    if (req.method === 'GET' && !m![2]) return sendJson(res, 200, shown(item), etag(item))
    if (req.method === 'DELETE' && !m![2]) item.status = 'closed'
    else if (req.method === 'POST' && m![2] === 'close') item.status = 'closed'
    else if ((req.method === 'POST' && m![2] === 'set') || (req.method === 'PATCH' && !m![2])) item.status = String((JSON.parse(req.body || '{}') as { status?: unknown }).status ?? item.status)
    else return sendJson(res, 405, { error: 'method' })
    item.rev++
    return sendJson(res, 200, shown(item), etag(item))
  })
  return { ...up, items }
}

/** The `items` resource over that upstream, with one action per kind of write. */
export function itemsResourceConfig(origin: string): Record<string, unknown> {
  return {
    environment: { name: 'items-test', host: origin },
    connector: {
      kind: 'http',
      sources: [{ name: 'items', base_url: origin }],
      list: { path: '/items', items_path: 'items', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next' } },
      get: { path: '/items/{id}' },
      version: { from: 'etag' },
    },
    fields: { id: 'string', status: 'string' },
    review_fields: ['id', 'status'],
    actions: {
      remove: { set: { status: 'closed' }, precondition: { status: 'open' }, write: { style: 'action', method: 'DELETE', path: '/items/{id}', if_match: false } },
      close: { set: { status: 'closed' }, precondition: { status: 'open' }, write: { style: 'action', method: 'POST', path: '/items/{id}/close', if_match: false } },
      close_for_good: {
        set: { status: 'closed' },
        precondition: { status: 'open' },
        write: { style: 'action', method: 'POST', path: '/items/{id}/set', body: { status: '{{set.status}}' }, if_match: false },
        reversible: false,
      },
      set_closed: {
        set: { status: 'closed' },
        precondition: { status: 'open' },
        write: { style: 'action', method: 'POST', path: '/items/{id}/set', body: { status: '{{set.status}}' }, if_match: false },
      },
      patch_closed: { set: { status: 'closed' }, precondition: { status: 'open' }, write: { method: 'PATCH', path: '/items/{id}', body: { status: '{{set.status}}' }, if_match: false } },
    },
  }
}
