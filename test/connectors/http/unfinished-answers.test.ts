import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A 2xx answer to a read that says of itself it is not the answer: 202 Accepted (the upstream took the request to
// answer later: GitHub's statistics endpoints while they compute, an asynchronous search job), whose body is not
// what the upstream holds (an empty list there is "not computed yet", never "none"); 206 Partial Content for a
// byte range nobody asked for (Warrant sends no Range: a cache in front of the upstream answering a part), whose
// body is a part of the answer, whatever it parses as. Real loopback upstreams.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const ITEMS = collection(12)
const reasons = (env: { incomplete_reasons: readonly unknown[] }) => JSON.stringify(env.incomplete_reasons)

function search(origin: string, path: string) {
  const resource = httpResource({ sources: [{ name: 'main', base_url: origin }], list: { path, page_size_param: 'limit', pagination: { style: 'cursor' } } })
  return searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 5 }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) =>
    envelopeSchema.parse(e),
  )
}

describe('a read answered 202 Accepted', () => {
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const cursor = req.url.searchParams.get('cursor')
      const path = req.url.pathname
      if (path === '/computing') return sendJson(res, 202, { items: [], next_cursor: null }, { 'retry-after': '7' })
      if (path === '/second-page-queued')
        return cursor === null ? sendJson(res, 200, { items: ITEMS.slice(0, 5), next_cursor: 'p2' }) : sendJson(res, 202, { items: [], next_cursor: null })
      const one = /^\/(accepted|ok)\/items\/(.+)$/.exec(path)
      if (one) {
        const item = ITEMS.find((i) => i.id === one[2])
        return item ? sendJson(res, one[1] === 'accepted' ? 202 : 200, item) : sendJson(res, 404, {})
      }
      if (path === '/accepted/lookup') {
        // the queued answer: r002 as it is not (yet), r001 as it is, so the one record sampled alone agrees
        const ids = (req.url.searchParams.get('ids') ?? '').split(',')
        return sendJson(res, 202, { items: ITEMS.filter((i) => ids.includes(i.id)).map((i) => (i.id === 'r002' ? { ...i, status: 'queued-value' } : i)) })
      }
      return sendJson(res, 404, {})
    })
  })
  after(() => up.close())

  test('a list answered 202 with an empty page: not complete, SOURCE_UNAVAILABLE with the status and its Retry-After (was: complete, 0 records)', async () => {
    const env = await search(up.origin, '/computing')
    assert.equal(env.complete, false, reasons(env))
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.equal(reason?.upstream_status, 202, reasons(env))
    assert.equal(reason?.retry_after_seconds, 7, reasons(env))
    assert.match(reason?.message ?? '', /202 Accepted/, reasons(env))
  })

  test('a second page answered 202: not complete, the first page kept (was: complete, 5 of 12)', async () => {
    const env = await search(up.origin, '/second-page-queued')
    assert.equal(env.complete, false, reasons(env))
    assert.deepEqual(env.items.map((i) => i.id), ITEMS.slice(0, 5).map((i) => i.id))
    assert.equal(env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')?.upstream_status, 202, reasons(env))
  })

  test('a read by id answered 202 with the record: failed with the status, never found', async () => {
    const connector = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: up.origin }], get: { path: '/accepted/items/{id}' } }) })
    const read = await connector.readByIds(['r001'])
    assert.equal(read.records.size, 0)
    assert.equal(read.failed[0]?.status, 202, JSON.stringify(read.failed))
    assert.match(read.failed[0]?.message ?? '', /202 Accepted/)
    await connector.close()
  })

  test('a get.batch answer of 202: not used, its ids read alone (was: r002 taken as the queued answer wrote it)', async () => {
    const resource = httpResource({
      sources: [{ name: 'main', base_url: up.origin }],
      get: { path: '/ok/items/{id}', batch: { path: '/accepted/lookup', ids_param: 'ids', encoding: 'comma', max_ids: 10, items_path: 'items' } },
    })
    const connector = createHttpConnector({ resource })
    const read = await connector.readByIds(['r001', 'r002'])
    assert.deepEqual([...read.records.keys()].sort(), ['r001', 'r002'])
    assert.equal(read.records.get('r002')?.fields.status, ITEMS[1]!.status)
    await connector.close()
  })
})

describe('a read answered 206 Partial Content for a byte range', () => {
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const path = req.url.pathname
      // the part holds whole JSON: what it is a part of is the upstream's word, not the parser's
      if (path === '/part') return sendJson(res, 206, { items: ITEMS.slice(0, 2), next_cursor: null }, { 'content-range': 'bytes 0-88/4096' })
      if (path === '/multipart') return sendJson(res, 206, { items: ITEMS.slice(0, 2), next_cursor: null }, { 'content-type': 'multipart/byteranges; boundary=x' })
      // PostgREST's page of rows: 206 with a range of items, a page like any other
      if (path === '/rows') return sendJson(res, 206, { items: ITEMS.slice(0, 2), next_cursor: null }, { 'content-range': '0-1/2' })
      const one = /^\/part\/items\/(.+)$/.exec(path)
      if (one) return sendJson(res, 206, ITEMS.find((i) => i.id === one[1]) ?? {}, { 'content-range': 'bytes 0-60/300' })
      return sendJson(res, 404, {})
    })
  })
  after(() => up.close())

  for (const path of ['/part', '/multipart'])
    test(`${path}: not complete, SOURCE_UNAVAILABLE naming the 206 (was: complete, 2 records)`, async () => {
      const env = await search(up.origin, path)
      assert.equal(env.complete, false, reasons(env))
      const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
      assert.equal(reason?.upstream_status, 206, reasons(env))
      assert.match(reason?.message ?? '', /206 Partial Content/, reasons(env))
    })

  test('a 206 for a range of rows, not bytes, is read as the page it is', async () => {
    const env = await search(up.origin, '/rows')
    assert.equal(env.complete, true, reasons(env))
    assert.equal(env.items.length, 2)
  })

  test('a read by id answered 206 for a byte range: failed with the status, never found', async () => {
    const connector = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: up.origin }], get: { path: '/part/items/{id}' } }) })
    const read = await connector.readByIds(['r001'])
    assert.equal(read.records.size, 0)
    assert.equal(read.failed[0]?.status, 206, JSON.stringify(read.failed))
    await connector.close()
  })
})

// 203 Non-Authoritative Information: an intermediary (a transforming proxy, a CDN's edge rewrite) changed the
// upstream's 200 before it reached Warrant. Whatever it holds is the intermediary's word, not the upstream's: a
// page cut or rewritten there reads as the upstream's answer. Not complete, read again later; a record so answered
// is not found.
describe('a read answered 203 Non-Authoritative Information', () => {
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const path = req.url.pathname
      // the proxy dropped the paging signal and some items: the body parses as a whole, last page
      if (path === '/rewritten') return sendJson(res, 203, { items: ITEMS.slice(0, 3), next_cursor: null })
      const one = /^\/rewritten\/items\/(.+)$/.exec(path)
      if (one) return sendJson(res, 203, ITEMS.find((i) => i.id === one[1]) ?? {})
      return sendJson(res, 404, {})
    })
  })
  after(() => up.close())

  test('a list answered 203: not complete, SOURCE_UNAVAILABLE naming the 203 (was: complete, 3 of 12)', async () => {
    const env = await search(up.origin, '/rewritten')
    assert.equal(env.complete, false, reasons(env))
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.equal(reason?.upstream_status, 203, reasons(env))
    assert.match(reason?.message ?? '', /203 Non-Authoritative Information/, reasons(env))
  })

  test('a read by id answered 203: failed with the status, never found', async () => {
    const connector = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: up.origin }], get: { path: '/rewritten/items/{id}' } }) })
    const read = await connector.readByIds(['r001'])
    assert.equal(read.records.size, 0)
    assert.equal(read.failed[0]?.status, 203, JSON.stringify(read.failed))
    await connector.close()
  })
})
