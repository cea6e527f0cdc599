import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A 2xx answer to a read that says of itself it is not the answer: 202 Accepted (the upstream took the request to
// answer later: GitHub's statistics endpoints while they compute, an asynchronous search job). Its body is not
// what the upstream holds: an empty list there is "not computed yet", never "none". Real loopback upstreams.
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
