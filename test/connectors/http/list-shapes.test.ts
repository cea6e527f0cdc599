import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { ReadPageResult } from '../../../src/connectors/connector.js'
import { parseConfig } from '../../../src/config/index.js'
import { matchesFilter } from '../../../src/contract/index.js'
import { collection, httpResource, idsOf, walk, type Item } from './fixtures.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from './upstream-server.js'

// List shapes unlike the demo, each reached by configuration only: POST search with the cursor in the body,
// keyset paging (start_after, or startkey + skip=1), JSON-encoded and comma-list parameters, filtered and
// collection-wide totals, and an upstream that ignores a filter it was sent.
const ITEMS = collection(23)
const PAST_DUE = ITEMS.filter((i) => i.status === 'past_due').map((i) => i.id)

/** A resource through the whole config check (the cross-key rules), as a config file would be. */
function httpResourceChecked(connector: Record<string, unknown>) {
  const config = parseConfig({
    resources: {
      items: {
        environment: { name: 'test' },
        connector: {
          kind: 'http',
          sources: [{ name: 'main', base_url: 'http://127.0.0.1:9' }],
          get: { path: '/x/{id}' },
          version: { from: 'field', field: 'version' },
          ...connector,
        },
        fields: { id: 'string', status: 'string', amount: 'number', version: 'integer' },
        review_fields: ['id', 'status'],
      },
    },
  })
  return config.resources['items']!
}

function bodyOf(req: SeenRequest): Record<string, unknown> {
  return JSON.parse(req.body) as Record<string, unknown>
}

describe('list shapes reached by configuration (real loopback upstream)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const q = req.url.searchParams
      switch (req.url.pathname) {
        case '/search': {
          // POST search: query, size and cursor in the JSON body; the cursor is an opaque token
          if (req.method !== 'POST') return sendJson(res, 405, { error: 'POST only' })
          const body = bodyOf(req)
          const states = (body['query'] as { status?: string } | undefined)?.status
          const matching = ITEMS.filter((i) => states === undefined || i.status === states)
          const start = typeof body['cursor'] === 'string' ? Number(Buffer.from(body['cursor'], 'base64url').toString()) : 0
          const size = Number(body['size'])
          const page = matching.slice(start, start + size)
          const end = start + page.length
          return sendJson(res, 200, { hits: page, total: matching.length, next: end < matching.length ? Buffer.from(String(end)).toString('base64url') : null })
        }
        case '/accounts': {
          // keyset: strictly after the given id, in id order
          const after = q.get('start_after')
          const from = after === null ? 0 : ITEMS.findIndex((i) => i.id > after)
          return sendJson(res, 200, { data: from < 0 ? [] : ITEMS.slice(from, from + Number(q.get('limit'))) })
        }
        case '/db/_view/by_status': {
          // CouchDB view: key="past_due" (JSON), startkey="r004" inclusive, skip=1 to step past it
          const key = q.get('key')
          const status = key === null ? undefined : (JSON.parse(key) as string)
          const rows = ITEMS.filter((i) => status === undefined || i.status === status)
          const start = q.get('startkey')
          let from = start === null ? 0 : rows.findIndex((i) => i.id >= (JSON.parse(start) as string))
          if (from < 0) from = rows.length
          from += Number(q.get('skip') ?? 0)
          return sendJson(res, 200, { total_rows: ITEMS.length, rows: rows.slice(from, from + Number(q.get('limit'))).map((doc) => ({ id: doc.id, key: doc.status, doc })) })
        }
        case '/stuck':
          // ignores start_after: the same first page every time
          return sendJson(res, 200, { data: ITEMS.slice(0, Number(q.get('limit'))) })
        case '/tickets': {
          // offset paging; status_in=a,b as a comma list; honours or ignores it; total per ?total=
          const wanted = q.get('status_in')?.split(',')
          const honour = q.get('honour') !== 'no'
          const rows = ITEMS.filter((i) => !honour || wanted === undefined || wanted.includes(i.status))
          const offset = Number(q.get('offset') ?? 0)
          const total = q.get('total') === 'collection' ? ITEMS.length : rows.length
          return sendJson(res, 200, { items: rows.slice(offset, offset + Number(q.get('limit'))), total })
        }
        default:
          return sendJson(res, 404, { error: 'no such path' })
      }
    })
  })
  after(() => upstream.close())

  const connector = (list: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list, ...extra }) })

  it('POST listing: query, page size and cursor in the JSON body; the filter goes upstream and is re-checked', async () => {
    const conn = connector({
      path: '/search',
      method: 'POST',
      body: { query: { status: '{{filter.status}}' }, size: '{{page_size}}', cursor: '{{cursor}}', track_total_hits: true },
      upstream_filters: [{ field: 'status', op: 'eq' }],
      items_path: 'hits',
      total_path: 'total',
      pagination: { style: 'cursor', next_cursor_path: 'next' },
    })
    upstream.seen.length = 0
    const { records, results } = await walk(conn, 'main', 3, { status: 'past_due' })
    assert.deepEqual(idsOf(records), PAST_DUE)
    const bodies = upstream.seen.map(bodyOf)
    // the first body has no cursor key at all; the later ones carry the upstream's cursor as it gave it
    assert.deepEqual(bodies[0], { query: { status: 'past_due' }, size: 3, track_total_hits: true })
    assert.equal(bodies[1]?.['cursor'], Buffer.from('3').toString('base64url'))
    assert.ok(upstream.seen.every((r) => r.method === 'POST' && r.headers['content-type'] === 'application/json' && r.url.search === ''))
    const first = results[0] as Extract<ReadPageResult, { kind: 'page' }>
    assert.equal(first.total, PAST_DUE.length)
    assert.deepEqual(first.upstreamTotal, { count: PAST_DUE.length, kind: 'filtered' })
  })

  it('POST listing without the filter: the body leaves the placeholder key out', async () => {
    const conn = connector({
      path: '/search',
      method: 'POST',
      body: { query: { status: '{{filter.status.eq}}' }, size: '{{page_size}}', cursor: '{{cursor}}' },
      upstream_filters: [{ field: 'status', op: 'eq' }],
      items_path: 'hits',
      pagination: { style: 'cursor', next_cursor_path: 'next' },
    })
    upstream.seen.length = 0
    const { records } = await walk(conn, 'main', 10)
    assert.deepEqual(idsOf(records), ITEMS.map((i) => i.id))
    assert.deepEqual(bodyOf(upstream.seen[0]!), { query: {}, size: 10 })
  })

  it('keyset with start_after=<last id>: a short page never ends the walk, an empty one does', async () => {
    const conn = connector({ path: '/accounts', items_path: 'data', page_size_param: 'limit', pagination: { style: 'keyset', param: 'start_after' } })
    upstream.seen.length = 0
    const { records } = await walk(conn, 'main', 5)
    assert.deepEqual(idsOf(records), ITEMS.map((i) => i.id))
    assert.deepEqual(
      upstream.seen.map((r) => r.url.searchParams.get('start_after')),
      [null, 'r005', 'r010', 'r015', 'r020', 'r023'],
    )
  })

  it('keyset on an upstream that ignores start_after: the same key again is a problem, never a loop or an end', async () => {
    const conn = connector({ path: '/stuck', items_path: 'data', page_size_param: 'limit', pagination: { style: 'keyset' } })
    const session = await conn.openSession()
    const first = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 5 })
    assert.ok(first.kind === 'page' && first.next === '"r005"')
    const second = await session.readPage({ source: 'main', filter: {}, position: first.next, pageSize: 5 })
    assert.notEqual(second.kind, 'page')
    assert.match('message' in second ? second.message : '', /same position again/)
  })

  it('keyset with a JSON-encoded inclusive startkey plus skip=1, over wrapped rows, with key="past_due" JSON-encoded', async () => {
    const conn = connector({
      path: '/db/_view/by_status',
      query: { include_docs: 'true' },
      items_path: 'rows',
      record_path: 'doc',
      page_size_param: 'limit',
      upstream_filters: [{ field: 'status', op: 'eq', param: 'key', encoding: 'json' }],
      pagination: { style: 'keyset', field: 'id', param: 'startkey', encoding: 'json', skip_param: 'skip' },
    })
    upstream.seen.length = 0
    const { records } = await walk(conn, 'main', 3, { status: 'past_due' })
    assert.deepEqual(idsOf(records), PAST_DUE)
    assert.match(upstream.seen[0]!.rawUrl, /[?&]key=%22past_due%22/)
    assert.equal(upstream.seen[0]!.url.searchParams.has('startkey'), false)
    assert.equal(upstream.seen[1]!.url.searchParams.get('startkey'), '"r007"')
    assert.equal(upstream.seen[1]!.url.searchParams.get('skip'), '1')
  })

  it('a comma-list filter for "in" goes upstream as a,b; a collection-wide total is exposed as such, never as the query total', async () => {
    const filter = { status: { in: ['past_due', 'paused'] } }
    const conn = connector({
      path: '/tickets',
      query: { total: 'collection' },
      page_size_param: 'limit',
      upstream_filters: [{ field: 'status', op: 'in', param: 'status_in', encoding: 'comma' }],
      total_path: 'total',
      total_kind: 'collection',
      pagination: { style: 'offset' },
    })
    upstream.seen.length = 0
    const { records, results } = await walk(conn, 'main', 4, filter)
    assert.deepEqual(idsOf(records), PAST_DUE)
    assert.equal(upstream.seen[0]!.url.searchParams.get('status_in'), 'past_due,paused')
    const pages = results as Extract<ReadPageResult, { kind: 'page' }>[]
    assert.ok(pages.every((p) => p.total === undefined && p.upstreamTotal?.count === ITEMS.length && p.upstreamTotal.kind === 'collection'))
    // the collection total (23) did not end the walk early or late: it ended on the first empty page
    assert.deepEqual(pages.at(-1)?.items, [])
  })

  it('a filtered total is the query total when the whole filter went upstream', async () => {
    const conn = connector({
      path: '/tickets',
      page_size_param: 'limit',
      upstream_filters: [{ field: 'status', op: 'in', param: 'status_in', encoding: 'comma' }],
      total_path: 'total',
      pagination: { style: 'offset' },
    })
    const { results } = await walk(conn, 'main', 4, { status: { in: ['past_due'] } })
    assert.ok(results.every((p) => p.kind === 'page' && p.total === PAST_DUE.length && p.upstreamTotal?.kind === 'filtered'))
    // it ends at the total, without an extra empty page
    assert.equal(results.length, Math.ceil(PAST_DUE.length / 4))
  })

  it('an upstream that ignores a filter it was sent can never widen the result: every item is re-checked', async () => {
    const filter = { status: { in: ['past_due'] }, amount: { gte: 50 } }
    const conn = connector({
      path: '/tickets',
      query: { honour: 'no' },
      page_size_param: 'limit',
      upstream_filters: [{ field: 'status', op: 'in', param: 'status_in', encoding: 'comma' }],
      total_path: 'total',
      pagination: { style: 'offset' },
    })
    const { records, results } = await walk(conn, 'main', 5, filter)
    const expected = ITEMS.filter((i: Item) => matchesFilter({ ...i }, filter, { id: 'string', status: 'string', amount: 'number', version: 'integer' })).map((i) => i.id)
    assert.ok(expected.length > 0 && expected.length < ITEMS.length)
    assert.deepEqual(idsOf(records), expected)
    // not every clause went upstream: the upstream's number is never passed off as this query's total
    assert.ok(results.every((p) => p.kind === 'page' && p.total === undefined && p.upstreamTotal?.count === ITEMS.length))
  })

  it('an upstream that ignores the whole filter: the items are still exact, and its total stays above what matched', async () => {
    const conn = connector({
      path: '/tickets',
      query: { honour: 'no' },
      page_size_param: 'limit',
      upstream_filters: [{ field: 'status', op: 'in', param: 'status_in', encoding: 'comma' }],
      total_path: 'total',
      pagination: { style: 'offset' },
    })
    const { records, results } = await walk(conn, 'main', 5, { status: { in: ['past_due'] } })
    assert.deepEqual(idsOf(records), PAST_DUE)
    // the upstream claims 23 matches for the query; the walk found 8, so a walk holding the two together can
    // never call 8 complete on this upstream's word (a count is never taken from the upstream)
    assert.ok(results.every((p) => p.kind === 'page' && p.total === ITEMS.length))
  })
})

describe('list configuration errors name the key and the fix', () => {
  const parse = (list: Record<string, unknown>) => () =>
    httpResourceChecked({ list: { path: '/x', pagination: { style: 'cursor' }, ...list } })

  it('a body without POST, and POST without a body', () => {
    assert.throws(parse({ body: { size: '{{page_size}}' } }), /connector\.list\.body: a body is sent only with method: POST/)
    assert.throws(parse({ method: 'POST' }), /connector\.list\.method: a POST list needs list\.body/)
  })

  it('an unknown placeholder, and a placeholder inside a longer string', () => {
    assert.throws(parse({ method: 'POST', body: { after: '{{next}}' } }), /unknown placeholder "\{\{next\}\}"/)
    assert.throws(parse({ method: 'POST', body: { q: 'status:{{filter.status}}' } }), /a placeholder must be the whole string value/)
  })

  it('a filter that is never sent, a comma list for a single value, a body filter nobody declared', () => {
    assert.throws(parse({ upstream_filters: [{ field: 'status' }] }), /upstream_filters\.0\.param: the filter on "status" \(eq\) is never sent: set param/)
    assert.throws(parse({ upstream_filters: [{ field: 'status', param: 's', encoding: 'comma' }] }), /upstream_filters\.0\.encoding: a comma list encodes the values of op "in"/)
    assert.throws(parse({ method: 'POST', body: { s: '{{filter.status}}' } }), /"\{\{filter\.status\.eq\}\}" names no upstream filter; declare it in list\.upstream_filters/)
    assert.throws(parse({ upstream_filters: [{ field: 'state', param: 'state' }] }), /upstream_filters\.0\.field: unknown field "state"/)
  })

  it('a keyset field that is not declared', () => {
    assert.throws(parse({ pagination: { style: 'keyset', field: 'created' } }), /connector\.list\.pagination\.field: unknown field "created"/)
  })

  it('the defaults still parse: GET, no body, no upstream filter, a filtered total', () => {
    const resource = parse({})()
    const list = resource.connector.kind === 'http' ? resource.connector.list : assert.fail('not http')
    assert.deepEqual([list.method, list.body, list.upstream_filters, list.total_kind], ['GET', undefined, [], 'filtered'])
  })
})
