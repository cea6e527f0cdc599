import { sendJson, startUpstream } from '../../connectors/http/upstream-server.js'
import type { Subscription } from './dataset.js'
import type { ExampleUpstream } from './stripe-like.js'

export interface SearchLikeUpstream extends ExampleUpstream {
  /** When set, the next searches report this many failed shards and leave their hits out. */
  failShards: number
  /** When true, searches answer `timed_out: true` with the hits found so far. */
  timeOut: boolean
}

/**
 * An Elasticsearch-style API: `POST /subscriptions/_search` with `{size, sort: [{id: "asc"}], search_after,
 * query: {bool: {filter: [{term: {FIELD: VALUE}}]}}}` answers `{timed_out, _shards: {total, successful,
 * failed, failures}, hits: {total: {value, relation}, hits: [{_id, _seq_no, _primary_term, _source, sort}]}}`.
 * `GET /subscriptions/_doc/{id}`; `POST /subscriptions/_update/{id}?if_seq_no=&if_primary_term=` with
 * `{doc: {...}}` is a partial update, 409 when the sequence number moved. Records live on two shards (by id).
 */
export async function startSearchLike(records: readonly Subscription[]): Promise<SearchLikeUpstream> {
  const byId = new Map(records.map((r) => [r.id, structuredClone(r)]))
  const writes = new Map<string, number>()
  let seq = records.length
  const seqNo = new Map(records.map((r, i) => [r.id, i]))
  const hit = (r: Subscription) => ({ _index: 'subscriptions', _id: r.id, _seq_no: seqNo.get(r.id), _primary_term: 1, _source: r, sort: [r.id] })
  const shardOf = (id: string) => Number(id.slice(-1)) % 2
  const state: SearchLikeUpstream = Object.assign(
    await startUpstream((req, res) => {
      if (req.method === 'POST' && req.url.pathname === '/subscriptions/_search') {
        const body = JSON.parse(req.body || '{}') as { size?: number; search_after?: [string]; query?: { bool?: { filter?: { term: Record<string, unknown> }[] } } }
        const size = Math.min(1000, body.size ?? 10)
        const after = body.search_after?.[0]
        const terms = (body.query?.bool?.filter ?? []).flatMap((f) => Object.entries(f.term ?? {}))
        const failed = Math.min(2, state.failShards)
        const matching = [...byId.values()]
          .filter((r) => terms.every(([k, v]) => (r as unknown as Record<string, unknown>)[k] === v))
          .sort((a, b) => (a.id < b.id ? -1 : 1))
        const visible = matching.filter((r) => failed === 0 || shardOf(r.id) >= failed)
        const page = visible.filter((r) => after === undefined || r.id > after).slice(0, size)
        return sendJson(res, 200, {
          took: 3,
          timed_out: state.timeOut,
          _shards: { total: 2, successful: 2 - failed, skipped: 0, failed, failures: Array.from({ length: failed }, (_, s) => ({ shard: s, index: 'subscriptions', reason: { type: 'node_disconnected_exception' } })) },
          hits: { total: { value: matching.length, relation: 'eq' }, hits: page.map(hit) },
        })
      }
      const doc = /^\/subscriptions\/_doc\/([^/]+)$/.exec(req.url.pathname)
      if (req.method === 'GET' && doc) {
        const record = byId.get(decodeURIComponent(doc[1]!))
        return record ? sendJson(res, 200, { ...hit(record), found: true }) : sendJson(res, 404, { _id: doc[1], found: false })
      }
      const update = /^\/subscriptions\/_update\/([^/]+)$/.exec(req.url.pathname)
      if (req.method === 'POST' && update) {
        const record = byId.get(decodeURIComponent(update[1]!))
        if (!record) return sendJson(res, 404, { error: { type: 'document_missing_exception' }, status: 404 })
        if (req.url.searchParams.get('if_seq_no') !== String(seqNo.get(record.id)))
          return sendJson(res, 409, { error: { type: 'version_conflict_engine_exception' }, status: 409 })
        const { doc: patch = {} } = JSON.parse(req.body || '{}') as { doc?: Record<string, unknown> }
        for (const [k, v] of Object.entries(patch)) if (k !== 'id') (record as unknown as Record<string, unknown>)[k] = v
        seqNo.set(record.id, ++seq)
        writes.set(record.id, (writes.get(record.id) ?? 0) + 1)
        return sendJson(res, 200, { _index: 'subscriptions', _id: record.id, result: 'updated', _seq_no: seqNo.get(record.id), _primary_term: 1 })
      }
      return sendJson(res, 404, { error: { type: 'no_handler' } })
    }),
    { records: byId, writes, failShards: 0, timeOut: false },
  )
  return state
}
