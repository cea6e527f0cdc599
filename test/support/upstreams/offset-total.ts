import { sendJson, startUpstream } from '../../connectors/http/upstream-server.js'
import type { Subscription } from './dataset.js'
import type { ExampleUpstream } from './stripe-like.js'

/**
 * A plain REST API with offset paging: `GET /api/subscriptions?offset=&limit=&status=` answers
 * `{results: [...]}` with the filtered count in `X-Total-Count`; `PATCH /api/subscriptions/{id}` with
 * `If-Match: <version>` (412 otherwise) answers 204 with no body: the record must be read back.
 */
export async function startOffsetTotal(records: readonly Subscription[]): Promise<ExampleUpstream> {
  const byId = new Map(records.map((r) => [r.id, structuredClone(r)]))
  const writes = new Map<string, number>()
  const upstream = await startUpstream((req, res) => {
    if (req.method === 'GET' && req.url.pathname === '/api/subscriptions') {
      const offset = Number(req.url.searchParams.get('offset') ?? 0)
      const limit = Math.min(200, Number(req.url.searchParams.get('limit') ?? 20))
      const status = req.url.searchParams.get('status')
      const all = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).filter((r) => !status || r.status === status)
      return sendJson(res, 200, { results: all.slice(offset, offset + limit) }, { 'x-total-count': String(all.length) })
    }
    const one = /^\/api\/subscriptions\/([^/]+)$/.exec(req.url.pathname)
    const record = one ? byId.get(decodeURIComponent(one[1]!)) : undefined
    if (!record) return sendJson(res, 404, { detail: 'Not found.' })
    if (req.method === 'GET') return sendJson(res, 200, record)
    if (req.method !== 'PATCH') return sendJson(res, 405, { detail: 'Method not allowed.' })
    if (req.headers['if-match'] !== String(record.version)) return sendJson(res, 412, { detail: 'Precondition failed.' })
    const patch = JSON.parse(req.body || '{}') as Record<string, unknown>
    for (const [k, v] of Object.entries(patch)) if (k !== 'id' && k !== 'version') (record as unknown as Record<string, unknown>)[k] = v
    record.version += 1
    writes.set(record.id, (writes.get(record.id) ?? 0) + 1)
    res.writeHead(204)
    res.end()
  })
  return { ...upstream, records: byId, writes }
}
