import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { callLog, collection, httpResource, idsOf, walk } from './fixtures.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from './upstream-server.js'

// Page-number paging with no total, no has_more and no link: an empty first page ended the walk complete with
// nothing, so every filter "proved" absence, also where the empty page was only the config's wrong origin (a
// 1-based upstream that answers `page=0` with nothing, under `pagination.first: 0`). The empty first page is now
// tested by one read of the next page number: records there are a wrong `first`, never an empty list.
describe('an empty first page of page-number paging is tested by the page after it', () => {
  const items = collection(23)
  let oneBased: TestUpstream
  let zeroBased: TestUpstream
  // a bare array per page, filtered by `status` when asked: neither upstream says how many records match
  const pageOf = (req: SeenRequest, origin: number) => {
    const page = Number(req.url.searchParams.get('page') ?? origin) - origin
    const size = Number(req.url.searchParams.get('size') ?? 10)
    const status = req.url.searchParams.get('status')
    const matching = status === null ? items : items.filter((i) => i.status === status)
    // page -1 of a 1-based list is slice(-size, 0): nothing, as json-server 1.x answers `_page=0`
    return matching.slice(page * size, page * size + size)
  }
  before(async () => {
    oneBased = await startUpstream((req, res) => sendJson(res, 200, pageOf(req, 1)))
    zeroBased = await startUpstream((req, res) => sendJson(res, 200, pageOf(req, 0)))
  })
  after(async () => {
    await oneBased.close()
    await zeroBased.close()
  })

  const connect = (up: TestUpstream, first: number, log = callLog()) =>
    createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: up.origin }],
        list: { path: '/items', items_path: '', page_size_param: 'size', filter_params: { status: 'status' }, pagination: { style: 'page', param: 'page', first } },
      }),
      onCall: log.onCall,
    })
  const firstPage = async (up: TestUpstream, first: number, filter: Filter = {}) => {
    const log = callLog()
    const session = await connect(up, first, log).openSession()
    const page = await session.readPage({ source: 'main', position: null, pageSize: 10, filter })
    await session.close()
    return { page, calls: log.calls }
  }

  test('a 1-based upstream under first: 0 is not complete, naming pagination.first (was complete with no record)', async () => {
    const { page, calls } = await firstPage(oneBased, 0, { status: 'active' })
    assert.equal(page.kind, 'refused', JSON.stringify(page))
    assert.equal(page.kind === 'refused' && page.configKey, 'connector.list.pagination.first')
    assert.match(page.kind === 'refused' ? page.message : '', /page 0 \(pagination\.first\) answered no record, yet page 1 has 10/)
    // the read of page 1 reached the upstream: it is a call like every other
    assert.deepEqual(calls.map((c) => [c.endpoint, c.status]), [['/items', 200], ['/items', 200]])
  })

  // first: 1 also reads page 0 (page-before-first.test.ts), which nothing proves right while the list is empty
  test('a filter nothing matches, on either origin rightly configured, is complete and empty after one more read (two at first: 1)', async () => {
    for (const [up, first, reads] of [[oneBased, 1, 3], [zeroBased, 0, 2]] as const) {
      const { page, calls } = await firstPage(up, first, { status: 'no_such_status' })
      assert.equal(page.kind, 'page', JSON.stringify(page))
      assert.deepEqual(page.kind === 'page' && [page.items.length, page.next], [0, null])
      assert.equal(calls.length, reads)
    }
  })

  test('rightly configured walks still end complete on the empty page after the last, with no extra read (but page 0 at first: 1)', async () => {
    for (const [up, first, reads] of [[oneBased, 1, 5], [zeroBased, 0, 4]] as const) {
      const log = callLog()
      const { records } = await walk(connect(up, first, log), 'main', 10)
      assert.deepEqual(idsOf(records), items.map((i) => i.id))
      assert.equal(log.calls.length, reads)
    }
  })
})
