import { sendJson, startUpstream } from '../../connectors/http/upstream-server.js'
import type { Subscription } from './dataset.js'
import type { ExampleUpstream } from './stripe-like.js'

/**
 * A CouchDB-style API. `GET /subs/_all_docs?include_docs=true&limit=N&startkey="<id>"&skip=1` walks every
 * document in id order (keys JSON-encoded). `GET /subs/_design/app/_view/by_status?key="past_due"&include_docs=true&limit=N`
 * (keys JSON-encoded), continued with `startkey="past_due"&startkey_docid=<last id>&skip=1`, answers
 * `{total_rows, offset, rows: [{id, key, value, doc}]}` where `total_rows` counts the whole view, not the
 * filtered rows. `GET /subs/{id}` answers the document with `_id` and `_rev`. There is no PATCH: `PUT
 * /subs/{id}` replaces the whole document and needs its current `_rev` in the body (409 otherwise); it answers
 * `{ok, id, rev}` without the document.
 */
export async function startCouchLike(records: readonly Subscription[]): Promise<ExampleUpstream> {
  const docs = new Map<string, Record<string, unknown>>()
  for (const r of records) {
    const { id, version: _v, ...rest } = structuredClone(r)
    docs.set(id, { _id: id, _rev: `1-${id}`, ...rest })
  }
  const writes = new Map<string, number>()
  const upstream = await startUpstream((req, res) => {
    if (req.method === 'GET' && req.url.pathname === '/subs/_design/app/_view/by_status') {
      const p = req.url.searchParams
      const parse = (name: string): unknown => (p.has(name) ? JSON.parse(p.get(name)!) : undefined)
      const key = parse('key') ?? parse('startkey')
      const startDoc = p.get('startkey_docid')
      const skip = Number(p.get('skip') ?? 0)
      const limit = Number(p.get('limit') ?? 25)
      const rows = [...docs.values()]
        .map((doc) => ({ id: doc._id as string, key: doc.status, value: { rev: doc._rev }, doc }))
        .sort((a, b) => (String(a.key) < String(b.key) ? -1 : String(a.key) > String(b.key) ? 1 : a.id < b.id ? -1 : 1))
      let from = rows.findIndex((r) => key === undefined || (r.key === key && (startDoc === null || r.id >= startDoc)))
      if (from < 0) from = rows.length
      const inKey = rows.slice(from).filter((r) => key === undefined || r.key === key)
      const page = inKey.slice(skip, skip + limit)
      return sendJson(res, 200, { total_rows: rows.length, offset: from, rows: p.get('include_docs') === 'true' ? page : page.map(({ doc: _d, ...r }) => r) })
    }
    if (req.method === 'GET' && req.url.pathname === '/subs/_all_docs') {
      const p = req.url.searchParams
      const startkey = p.has('startkey') ? (JSON.parse(p.get('startkey')!) as string) : undefined
      const skip = Number(p.get('skip') ?? 0)
      const limit = Number(p.get('limit') ?? 25)
      const rows = [...docs.values()].map((doc) => ({ id: doc._id as string, key: doc._id as string, value: { rev: doc._rev }, doc })).sort((a, b) => (a.id < b.id ? -1 : 1))
      let from = startkey === undefined ? 0 : rows.findIndex((r) => r.id >= startkey)
      if (from < 0) from = rows.length
      const page = rows.slice(from + skip, from + skip + limit)
      return sendJson(res, 200, { total_rows: rows.length, offset: from + skip, rows: p.get('include_docs') === 'true' ? page : page.map(({ doc: _d, ...r }) => r) })
    }
    const one = /^\/subs\/([^/_][^/]*)$/.exec(req.url.pathname)
    const doc = one ? docs.get(decodeURIComponent(one[1]!)) : undefined
    if (!one || !doc) return sendJson(res, 404, { error: 'not_found', reason: 'missing' })
    if (req.method === 'GET') return sendJson(res, 200, doc, { etag: `"${doc._rev as string}"` })
    if (req.method !== 'PUT') return sendJson(res, 405, { error: 'method_not_allowed', reason: 'Only GET,HEAD,PUT,DELETE allowed' })
    const body = JSON.parse(req.body || '{}') as Record<string, unknown>
    if (body._rev !== doc._rev) return sendJson(res, 409, { error: 'conflict', reason: 'Document update conflict.' })
    // A PUT replaces the document: whatever the body lacks is gone.
    const generation = Number(String(doc._rev).split('-')[0]) + 1
    const replaced = { ...body, _id: doc._id, _rev: `${generation}-${doc._id as string}` }
    docs.set(doc._id as string, replaced)
    writes.set(doc._id as string, (writes.get(doc._id as string) ?? 0) + 1)
    return sendJson(res, 201, { ok: true, id: doc._id, rev: replaced._rev })
  })
  // The records map is the documents' view for assertions: id → document.
  return { ...upstream, records: docs as unknown as Map<string, Subscription>, writes }
}
