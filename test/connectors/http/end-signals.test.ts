import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// An end signal on a FULL page (a total reached, has_more false) is tested by one read past it. A `total_path`
// at a count of the items on this page (`{items, count}`, a common API shape), or a `has_more_path` at a false that
// does not mean "last page", used to end the walk after the first full page: 10 of 100 records, complete: true, and
// `warrant check` said the totals guarantee held (it compared the total with a walk that the same total ended).
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const search = (c: ReturnType<typeof createHttpConnector>) =>
  searchAll(c, { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 200, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) => envelopeSchema.parse(e))

/** An offset upstream over `count` items; `meta` says what it adds to each page. */
function upstreamOf(count: number, meta: (page: unknown[], from: number) => Record<string, unknown>): () => TestUpstream {
  const items = collection(count)
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      const page = items.slice(from, from + Number(req.url.searchParams.get('limit') ?? 10))
      sendJson(res, 200, { items: page, ...meta(page, from) })
    })
  })
  after(() => up.close())
  return () => up
}

const resource = (origin: string, end: Record<string, unknown>) =>
  httpResource({ sources: [{ name: 'main', base_url: origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' }, ...end } })
const listReads = (up: TestUpstream) => up.seen.filter((r) => r.url.pathname === '/items').length

describe('a total that counts the page, not the list', () => {
  // `count`: the items on this page; `more`: a flag that means something else (always false here)
  const up = upstreamOf(100, (page) => ({ count: page.length, more: false }))

  for (const [name, end, key] of [
    ['total_path', { total_path: 'count' }, 'connector.list.total_path'],
    ['has_more_path', { has_more_path: 'more' }, 'connector.list.has_more_path'],
  ] as const) {
    test(`${name}: the search is not complete with a tenth of the collection, and says why (was complete: true with 10 of 100)`, async () => {
      const env = await search(createHttpConnector({ resource: resource(up().origin, end) }))
      assert.equal(env.complete, false, `complete with ${env.items.length} of 100`)
      const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
      assert.ok(reason?.message?.includes(`${name} "${name === 'total_path' ? 'count' : 'more'}"`), JSON.stringify(env.incomplete_reasons))
    })

    test(`${name}: warrant check does not pass it, and names ${key} (was totals holds, verdict holds)`, async () => {
      const c = resource(up().origin, end)
      const report = await checkResource({ name: 'items', config: c, connector: createHttpConnector({ resource: c }), pages: 3, pageSize: 10 })
      assert.notEqual(report.verdict, 'holds')
      const named = report.guarantees.filter((g) => g.config_keys.includes(key))
      assert.ok(named.length > 0 && named.every((g) => g.status === 'fails_closed'), JSON.stringify(report.guarantees))
      const totals = report.guarantees.find((g) => g.name === 'totals')!
      assert.notEqual(totals.status, 'holds', totals.detail)
    })
  }
})

describe('a correct end signal', () => {
  const exact = upstreamOf(100, (_page, _from) => ({ total: 100, more: false }))
  const byFlag = upstreamOf(100, (page, from) => ({ more: from + page.length < 100 }))
  const short = upstreamOf(95, () => ({ total: 95 }))

  test('a total on a collection that is an exact multiple of the page: complete, at one extra request', async () => {
    const before = listReads(exact())
    const env = await search(createHttpConnector({ resource: resource(exact().origin, { total_path: 'total' }) }))
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 100)
    assert.equal(listReads(exact()) - before, 11, '10 pages and the read past the last one')
  })

  test('has_more on an exact multiple: complete, at one extra request', async () => {
    const before = listReads(byFlag())
    const env = await search(createHttpConnector({ resource: resource(byFlag().origin, { has_more_path: 'more' }) }))
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 100)
    assert.equal(listReads(byFlag()) - before, 11)
  })

  test('a short last page: complete, at one extra request too (a short page proves no end: the upstream may cap its pages)', async () => {
    const before = listReads(short())
    const env = await search(createHttpConnector({ resource: resource(short().origin, { total_path: 'total' }) }))
    assert.equal(env.complete, true)
    assert.equal(env.items.length, 95)
    assert.equal(listReads(short()) - before, 11)
  })

  test('warrant check vouches for a total whose end it tested', async () => {
    const c = resource(exact().origin, { total_path: 'total' })
    const report = await checkResource({ name: 'items', config: c, connector: createHttpConnector({ resource: c }), pages: 12, pageSize: 10 })
    const totals = report.guarantees.find((g) => g.name === 'totals')!
    assert.equal(totals.status, 'holds', totals.detail)
  })
})

describe('other styles: has_more false on a full page with a position still to ask', () => {
  const items = collection(30)
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const cursor = req.url.searchParams.get('cursor')
      const after = req.url.searchParams.get('after')
      const from = cursor !== null ? Number(cursor) : after !== null ? items.findIndex((i) => i.id === after) + 1 : 0
      const page = items.slice(from, from + 10)
      // the cursor keeps coming; `more` is false on every page
      sendJson(res, 200, { items: page, next: String(from + page.length), more: false })
    })
  })
  after(() => up.close())

  for (const pagination of [{ style: 'cursor', next_cursor_path: 'next' }, { style: 'keyset', param: 'after' }]) {
    test(`${pagination.style}: not complete, naming has_more_path`, async () => {
      const c = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', has_more_path: 'more', pagination } })
      const env = await search(createHttpConnector({ resource: c }))
      assert.equal(env.complete, false, `complete with ${env.items.length} of 30`)
      assert.ok(env.incomplete_reasons.some((r) => r.message?.includes('has_more_path "more"')), JSON.stringify(env.incomplete_reasons))
    })
  }
})

// A page shorter than asked is the end only if the upstream sends as many as asked. One that caps its pages (25
// here, asked for 100: GitHub and Stripe cap at 100 without a word) makes every page short, so a `count` of the
// page or a `more` flag meaning something else ended the walk after 25 of 100, complete: true.
describe('an upstream that caps its pages below the size asked', () => {
  const items = collection(100)
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      const page = items.slice(from, from + Math.min(25, Number(req.url.searchParams.get('limit') ?? 10)))
      sendJson(res, 200, { items: page, count: page.length, more: false, total: 100 })
    })
  })
  after(() => up.close())
  const capped = (c: ReturnType<typeof createHttpConnector>) =>
    searchAll(c, { resource: 'items', filter: {}, pageSize: 100 }, { maxPages: 200, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) => envelopeSchema.parse(e))

  for (const [name, end] of [
    ['total_path', { total_path: 'count' }],
    ['has_more_path', { has_more_path: 'more' }],
  ] as const)
    test(`${name} on a short page is tested too: not complete with 25 of 100 (was complete: true)`, async () => {
      const env = await capped(createHttpConnector({ resource: resource(up.origin, end) }))
      assert.equal(env.complete, false, `complete with ${env.items.length} of 100`)
      assert.ok(env.incomplete_reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE' && r.message?.includes(`${name} "`)), JSON.stringify(env.incomplete_reasons))
    })

  test('a right total under the cap: complete, the read past the short last page finding nothing', async () => {
    const env = await capped(createHttpConnector({ resource: resource(up.origin, { total_path: 'total' }) }))
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 100)
  })
})
