import { createHash } from 'node:crypto'
import { sendJson, startUpstream } from '../../connectors/http/upstream-server.js'
import type { Subscription } from './dataset.js'
import type { ExampleUpstream } from './stripe-like.js'

/**
 * A GitHub-style API: `GET /orgs/acme/subscriptions?per_page=&page=&state=` answers a bare array with a
 * `Link: <…>; rel="next"` header; `GET …/{id}` carries a weak `ETag`; `PATCH …/{id}` needs `If-Match` with
 * that ETag (412 otherwise) and answers the record with its new ETag. The field Warrant calls `status` is
 * `state` here, and the region lives at `location.region`.
 */
export async function startGithubLike(records: readonly Subscription[]): Promise<ExampleUpstream> {
  const byId = new Map(records.map((r) => [r.id, structuredClone(r)]))
  const writes = new Map<string, number>()
  const etag = (r: Subscription) => `W/"${createHash('sha1').update(JSON.stringify(r)).digest('hex').slice(0, 16)}"`
  const shape = (r: Subscription) => {
    const { status, region, version: _version, ...rest } = r
    return { ...rest, state: status, location: { region } }
  }
  const upstream = await startUpstream((req, res) => {
    const base = '/orgs/acme/subscriptions'
    if (req.method === 'GET' && req.url.pathname === base) {
      const perPage = Math.min(100, Number(req.url.searchParams.get('per_page') ?? 30))
      const page = Number(req.url.searchParams.get('page') ?? 1)
      const state = req.url.searchParams.get('state')
      const all = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).filter((r) => !state || r.status === state)
      const slice = all.slice((page - 1) * perPage, page * perPage)
      const headers: Record<string, string> = {}
      if (page * perPage < all.length) {
        const next = new URL(req.rawUrl, upstream.origin)
        next.searchParams.set('page', String(page + 1))
        headers.link = `<${next.toString()}>; rel="next"`
      }
      return sendJson(res, 200, slice.map((r) => ({ ...shape(r), etag: etag(r) })), headers)
    }
    const one = new RegExp(`^${base}/([^/]+)$`).exec(req.url.pathname)
    const record = one ? byId.get(decodeURIComponent(one[1]!)) : undefined
    if (!record) return sendJson(res, 404, { message: 'Not Found' })
    if (req.method === 'GET') return sendJson(res, 200, shape(record), { etag: etag(record) })
    if (req.method !== 'PATCH') return sendJson(res, 405, { message: 'Method Not Allowed' })
    if (req.headers['if-match'] !== etag(record)) return sendJson(res, 412, { message: 'Precondition Failed' })
    const patch = JSON.parse(req.body || '{}') as Record<string, unknown>
    if (typeof patch.state === 'string') record.status = patch.state as Subscription['status']
    for (const key of ['collection', 'owner', 'tags'] as const) if (key in patch) (record as unknown as Record<string, unknown>)[key] = patch[key]
    record.version += 1
    writes.set(record.id, (writes.get(record.id) ?? 0) + 1)
    return sendJson(res, 200, shape(record), { etag: etag(record) })
  })
  return { ...upstream, records: byId, writes }
}
