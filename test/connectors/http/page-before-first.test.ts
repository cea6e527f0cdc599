import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { Connector } from '../../../src/connectors/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { callLog, collection, httpResource } from './fixtures.js'
import { startJsonServer, type JsonServerUpstream } from './json-server-upstream.js'
import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from './upstream-server.js'

// Page-number paging starts at `pagination.first` (1 unless set). A Spring-style upstream numbering its pages from 0
// (`?page=0&size=10`, `{content, number, last}`, no total) under the default had its page 0 read by no walk: the
// search ended `complete: true` with 13 of 23 records (3 of 3 on a list of one page: none of them, "complete"), and
// only `warrant check`'s page_origin saw it. The walk now reads page `first - 1` once at its start: records there
// that page `first` does not hold refuse the source, naming pagination.first; an error, an empty page or page
// `first`'s records again is how an upstream says it has no such page, and that answer is kept for the connector's
// lifetime, so a rightly configured walk pays one request once.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const items = collection(23)

/** How an upstream answers a page number below its first. */
type Below = 'records' | 'error' | 'empty' | 'clamp'

/** A Spring Data-shaped page: `content`, `number`, `size`, `last`; counts pages from `origin`. */
function pageOf(list: readonly unknown[], req: SeenRequest, origin: number, below: Below) {
  const asked = Number(req.url.searchParams.get('page') ?? origin)
  const size = Number(req.url.searchParams.get('size') ?? 20)
  const page = asked < origin && below === 'clamp' ? origin : asked
  const index = page - origin
  const content = index < 0 ? [] : list.slice(index * size, index * size + size)
  return { content, number: page, size, numberOfElements: content.length }
}

async function startPaged(origin: number, below: Below, list: readonly unknown[] = items): Promise<TestUpstream> {
  return startUpstream((req, res) => {
    const asked = Number(req.url.searchParams.get('page') ?? origin)
    if (asked < origin && below === 'error') return sendJson(res, 400, { status: 400, error: 'Bad Request', message: `page index must not be less than ${origin}` })
    sendJson(res, 200, pageOf(list, req, origin, below))
  })
}

const connect = (origin: string, first: number, log = callLog()): Connector =>
  createHttpConnector({
    resource: httpResource({
      sources: [{ name: 'main', base_url: origin }],
      list: { path: '/items', items_path: 'content', page_size_param: 'size', pagination: { style: 'page', param: 'page', first } },
    }),
    onCall: log.onCall,
  })

const search = async (connector: Connector, pageSize = 10) =>
  envelopeSchema.parse(await searchAll(connector, { resource: 'items', filter: {}, pageSize }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))

const pagesAsked = (up: TestUpstream) => up.seen.filter((r) => r.url.pathname === '/items').map((r) => Number(r.url.searchParams.get('page')))

describe('a 0-based page-number upstream under pagination.first: 1', () => {
  let up: TestUpstream
  let small: TestUpstream
  before(async () => {
    up = await startPaged(0, 'records')
    small = await startPaged(0, 'records', items.slice(0, 3))
  })
  after(async () => {
    await up.close()
    await small.close()
  })

  test('is not complete, naming pagination.first (was complete: true with 13 of 23)', async () => {
    const env = await search(connect(up.origin, 1))
    assert.equal(env.complete, false, `complete with ${env.items.length} of 23`)
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.match(reason?.message ?? '', /page 0\b.*pagination\.first.*set pagination\.first: 0/, JSON.stringify(env.incomplete_reasons))
  })

  test('a list of one page is not complete either (was complete: true with none of its 3 records)', async () => {
    const env = await search(connect(small.origin, 1))
    assert.equal(env.complete, false, `complete with ${env.items.length} of 3`)
    assert.ok(env.incomplete_reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE'), JSON.stringify(env.incomplete_reasons))
  })

  test('the first page is refused with configKey pagination.first, and a second walk is refused again', async () => {
    const connector = connect(up.origin, 1)
    for (let i = 0; i < 2; i++) {
      const session = await connector.openSession()
      const page = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
      await session.close()
      assert.equal(page.kind, 'refused', JSON.stringify(page))
      assert.equal(page.kind === 'refused' && page.configKey, 'connector.list.pagination.first')
    }
  })

  test('rightly configured (first: 0): complete, every record, and no page below 0 is asked', async () => {
    up.seen.length = 0
    const env = await search(connect(up.origin, 0))
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.deepEqual(env.items.map((i) => i.id), items.map((i) => i.id))
    assert.deepEqual(pagesAsked(up), [0, 1, 2, 3])
  })
})

describe('a 1-based upstream under first: 1 is walked whole, at one request more once per connector', () => {
  const started: TestUpstream[] = []
  after(async () => {
    for (const up of started) await up.close()
  })

  for (const below of ['error', 'empty', 'clamp'] as const)
    test(`page 0 answered ${below === 'error' ? 'with a 400' : below === 'empty' ? 'with an empty page' : "with page 1's records"}: complete; page 0 read by the first walk only`, async () => {
      const up = await startPaged(1, below)
      started.push(up)
      const connector = connect(up.origin, 1)
      const first = await search(connector)
      assert.equal(first.complete, true, JSON.stringify(first.incomplete_reasons))
      assert.deepEqual(first.items.map((i) => i.id), items.map((i) => i.id))
      // pages 1, 2, 3 (23 records), the empty page 4 that ends it, and page 0 once
      assert.deepEqual(pagesAsked(up), [1, 0, 2, 3, 4])
      up.seen.length = 0
      const second = await search(connector)
      assert.equal(second.complete, true)
      assert.deepEqual(pagesAsked(up), [1, 2, 3, 4], 'the answer about page 0 is kept for the connector')
    })

  test('an empty list: complete and empty, page 0 asked on every walk (nothing yet proves the origin)', async () => {
    const up = await startPaged(1, 'empty', [])
    started.push(up)
    const connector = connect(up.origin, 1)
    for (let i = 0; i < 2; i++) {
      up.seen.length = 0
      const env = await search(connector)
      assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
      assert.equal(env.items.length, 0)
      // page 1 empty, page 2 (the empty first page's test), page 0
      assert.deepEqual(pagesAsked(up), [1, 2, 0])
    }
  })

  test('first: 2 over it (a wrong origin the other way): not complete, naming pagination.first and saying first: 1', async () => {
    const up = await startPaged(1, 'error')
    started.push(up)
    const env = await search(connect(up.origin, 2))
    assert.equal(env.complete, false, `complete with ${env.items.length} of 23`)
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.match(reason?.message ?? '', /pagination\.first.*set pagination\.first: 1/, JSON.stringify(env.incomplete_reasons))
  })

  test('a page 0 that fails (503) is that failure: the first page is not given, and the next read asks page 0 again', async () => {
    let failures = 1
    const up = await startUpstream((req, res) => {
      if (req.url.searchParams.get('page') === '0' && failures-- > 0) return sendJson(res, 503, { error: 'busy' })
      sendJson(res, 200, pageOf(items, req, 1, 'error'))
    })
    started.push(up)
    const connector = connect(up.origin, 1)
    const session = await connector.openSession()
    const failed = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
    assert.equal(failed.kind, 'unavailable', JSON.stringify(failed))
    assert.match(failed.kind === 'unavailable' ? failed.message : '', /pagination\.first/)
    const again = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
    await session.close()
    assert.equal(again.kind, 'page', JSON.stringify(again))
    assert.deepEqual(pagesAsked(up), [1, 0, 1, 0])
  })
})

// json-server 0.17 counts pages from 1 and answers `_page=0` as page 1: the clamp, a right origin.
describe('json-server 0.17 under _page with first: 1', () => {
  let upstream: JsonServerUpstream
  before(async () => {
    upstream = await startJsonServer({ items: items.map((i) => ({ ...i })) })
  })
  after(() => upstream.close())

  test('is complete with every record, at one request for _page=0', async () => {
    const connector = createHttpConnector({
      resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/items', items_path: '', page_size_param: '_limit', pagination: { style: 'page', param: '_page' } } }),
    })
    const env = await search(connector)
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.deepEqual(env.items.map((i) => i.id), items.map((i) => i.id))
    assert.deepEqual(upstream.requests.map((u) => new URL(u, 'http://x').searchParams.get('_page')), ['1', '0', '2', '3', '4'])
  })
})
