import { sendJson, startUpstream, type TestUpstream } from '../../connectors/http/upstream-server.js'
import type { Subscription } from './dataset.js'

/**
 * A Stripe-style API: `GET /v1/subscriptions?limit=&starting_after=&status=` answers
 * `{object: "list", data, has_more}` in id order; `starting_after` is the last id of the previous page.
 * `POST /v1/subscriptions/{id}` is a partial update that honours `If-Match` on the record's version.
 */
export interface ExampleUpstream extends TestUpstream {
  readonly records: Map<string, Subscription>
  /** Successful writes per id. */
  readonly writes: Map<string, number>
}

export async function startStripeLike(records: readonly Subscription[]): Promise<ExampleUpstream> {
  const byId = new Map(records.map((r) => [r.id, structuredClone(r)]))
  const writes = new Map<string, number>()
  const shape = (r: Subscription) => ({ object: 'subscription', ...r })
  const upstream = await startUpstream((req, res) => {
    const one = /^\/v1\/subscriptions\/([^/]+)$/.exec(req.url.pathname)
    if (req.method === 'GET' && req.url.pathname === '/v1/subscriptions') {
      const limit = Math.min(100, Number(req.url.searchParams.get('limit') ?? 10))
      const after = req.url.searchParams.get('starting_after')
      const status = req.url.searchParams.get('status')
      const sorted = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).filter((r) => !status || r.status === status)
      const from = after === null ? 0 : sorted.findIndex((r) => r.id > after)
      const rest = from < 0 ? [] : sorted.slice(from)
      return sendJson(res, 200, { object: 'list', data: rest.slice(0, limit).map(shape), has_more: rest.length > limit, url: '/v1/subscriptions' })
    }
    if (!one) return sendJson(res, 404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } })
    const record = byId.get(decodeURIComponent(one[1]!))
    if (!record) return sendJson(res, 404, { error: { type: 'invalid_request_error', message: 'No such subscription' } })
    if (req.method === 'GET') return sendJson(res, 200, shape(record))
    if (req.method !== 'POST') return sendJson(res, 405, { error: { message: 'method not allowed' } })
    const ifMatch = req.headers['if-match']
    if (ifMatch !== undefined && ifMatch !== String(record.version)) return sendJson(res, 412, { error: { type: 'idempotency_error', message: 'version changed' } })
    const patch = JSON.parse(req.body || '{}') as Partial<Subscription>
    for (const [k, v] of Object.entries(patch)) if (k !== 'id' && k !== 'version') (record as unknown as Record<string, unknown>)[k] = v
    record.version += 1
    writes.set(record.id, (writes.get(record.id) ?? 0) + 1)
    return sendJson(res, 200, shape(record))
  })
  return { ...upstream, records: byId, writes }
}
