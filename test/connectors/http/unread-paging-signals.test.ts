import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema, type Filter } from '../../../src/contract/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A paging signal Warrant cannot read (a total that is not this list's count, a declared path the answer lacks,
// a page parameter the upstream ignores) is a config that does not match the upstream: the walk says it is not
// complete, naming the config key, never "the end".
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }

function search(connector: Connector, filter: Filter = {}) {
  const limits = { maxPages: 200, deadlineMs: 10_000 }
  return searchAll(connector, { resource: 'items', filter, pageSize: 5 }, limits, { scope, cursorCodec: codec }).then((e) => envelopeSchema.parse(e))
}

function connectorAt(origin: string, list: Record<string, unknown>) {
  return createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: origin }], list: { path: '/items', page_size_param: 'limit', ...list } }) })
}

/** The envelope is not complete, and one of its reasons says `words`. */
function assertNotComplete(envelope: Awaited<ReturnType<typeof search>>, code: string, words: string) {
  assert.equal(envelope.complete, false, `complete with ${envelope.items.length} items`)
  const reason = envelope.incomplete_reasons.find((r) => r.code === code)
  assert.ok(reason, `no ${code} among ${JSON.stringify(envelope.incomplete_reasons)}`)
  assert.ok(reason.message?.includes(words), `${reason.message} does not name ${words}`)
}

describe('a total below the records already received', () => {
  const ITEMS = collection(15)
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const limit = Number(req.url.searchParams.get('limit') ?? 5)
      const page = req.url.searchParams.get('page')
      const offset = page === null ? Number(req.url.searchParams.get('offset') ?? 0) : (Number(page) - 1) * limit
      const items = ITEMS.slice(offset, offset + limit)
      // meta.pages is the number of pages, not of records: 3, below the 5 records of page 1
      sendJson(res, 200, { items, meta: { pages: 3, count: ITEMS.length } }, { 'x-page-count': '3' })
    })
  })
  after(() => upstream.close())

  it('offset paging: not complete (was complete and proven with 5 of 15), naming total_path', async () => {
    const envelope = await search(connectorAt(upstream.origin, { total_path: 'meta.pages', pagination: { style: 'offset' } }))
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'total_path "meta.pages"')
  })

  it('page paging with a total header: not complete, naming the header', async () => {
    const envelope = await search(connectorAt(upstream.origin, { total_header: 'X-Page-Count', pagination: { style: 'page' } }))
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'X-Page-Count')
  })

  it('a total that is the count still ends the walk at the end of the list', async () => {
    const envelope = await search(connectorAt(upstream.origin, { total_path: 'meta.count', pagination: { style: 'offset' } }))
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.equal(envelope.items.length, ITEMS.length)
  })
})

describe('declared paging paths absent from the answer', () => {
  const ITEMS = collection(12)
  let upstream: TestUpstream
  before(async () => {
    // the upstream nests its paging signals: {items, meta: {has_more, next_cursor, next, timed_out}}
    upstream = await startUpstream((req, res) => {
      const start = Number(req.url.searchParams.get('cursor') ?? 0)
      const end = Math.min(start + Number(req.url.searchParams.get('limit') ?? 5), ITEMS.length)
      const more = end < ITEMS.length
      const flat = req.url.searchParams.get('flat') === '1'
      const meta = { has_more: more, next_cursor: more ? String(end) : null, next: more ? `/items?cursor=${end}${flat ? '&flat=1' : ''}` : null, timed_out: false }
      if (flat) return sendJson(res, 200, { items: ITEMS.slice(start, end), ...meta })
      sendJson(res, 200, { items: ITEMS.slice(start, end), meta })
    })
  })
  after(() => upstream.close())

  it('has_more_path: not complete after page 1 (was complete with 5 of 12), naming has_more_path', async () => {
    const envelope = await search(connectorAt(upstream.origin, { has_more_path: 'has_more', pagination: { style: 'cursor', next_cursor_path: 'meta.next_cursor' } }))
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'has_more_path "has_more"')
  })

  it('incomplete_flag.path: not complete (its absence was read as "not flagged"), naming incomplete_flag.path', async () => {
    const list = { incomplete_flag: { path: 'timed_out', reason: 'TIME_BUDGET_EXCEEDED' }, pagination: { style: 'cursor', next_cursor_path: 'meta.next_cursor' } }
    const envelope = await search(connectorAt(upstream.origin, list))
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'incomplete_flag.path "timed_out"')
  })

  it('next_cursor_path absent on a full page: not complete (was complete with 5 of 12), naming next_cursor_path', async () => {
    const envelope = await search(connectorAt(upstream.origin, { pagination: { style: 'cursor' } }))
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'next_cursor_path "next_cursor"')
  })

  it('next_link path absent on a full page: not complete, naming the next_link path', async () => {
    const envelope = await search(connectorAt(upstream.origin, { pagination: { style: 'next_link' } }))
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'pagination.path "next"')
  })

  it('the same upstream read at the right paths walks to the end, complete', async () => {
    const list = { query: { flat: '1' }, has_more_path: 'has_more', incomplete_flag: { path: 'timed_out', reason: 'TIME_BUDGET_EXCEEDED' } }
    for (const pagination of [{ style: 'cursor' }, { style: 'next_link' }]) {
      const envelope = await search(connectorAt(upstream.origin, { ...list, pagination }))
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      assert.equal(envelope.items.length, ITEMS.length)
    }
  })
})

describe('an absent next marker where the end is plain', () => {
  const ITEMS = collection(7)
  let upstream: TestUpstream
  before(async () => {
    // the upstream leaves the next cursor out (rather than null) on its last page, and on an empty list
    upstream = await startUpstream((req, res) => {
      const start = Number(req.url.searchParams.get('cursor') ?? 0)
      const end = Math.min(start + 5, ITEMS.length)
      const items = req.url.pathname === '/empty' ? [] : ITEMS.slice(start, end)
      const more = req.url.pathname !== '/empty' && end < ITEMS.length
      const hasMore = req.url.searchParams.get('has_more') === '1' ? { has_more: more } : {}
      sendJson(res, 200, more ? { items, next_cursor: String(end), ...hasMore } : { items, ...hasMore })
    })
  })
  after(() => upstream.close())

  it('on a short page, on an empty page, or with has_more false, the absent cursor is the end', async () => {
    for (const list of [{ path: '/items' }, { path: '/empty' }, { path: '/items', query: { has_more: '1' }, has_more_path: 'has_more' }]) {
      const envelope = await search(connectorAt(upstream.origin, { ...list, pagination: { style: 'cursor' } }))
      assert.equal(envelope.complete, true, `${list.path}: ${JSON.stringify(envelope.incomplete_reasons)}`)
      assert.equal(envelope.items.length, list.path === '/empty' ? 0 : ITEMS.length)
    }
  })
})

describe('page-number paging whose page parameter the upstream ignores', () => {
  // the only past_due records are on pages 2 and 3, so the filter keeps nothing of page 1
  const ITEMS = collection(15).map((i, n) => ({ ...i, status: n >= 7 && n % 3 === 0 ? 'past_due' : 'active' }))
  let upstream: TestUpstream
  before(async () => {
    // the upstream reads its page number from `p`; the config says `page`
    upstream = await startUpstream((req, res) => {
      const page = Number(req.url.searchParams.get('p') ?? 1)
      sendJson(res, 200, ITEMS.slice((page - 1) * 5, page * 5), { 'x-total-count': String(ITEMS.length) })
    })
  })
  after(() => upstream.close())

  const list = (param: string) => ({ items_path: '', total_header: 'X-Total-Count', pagination: { style: 'page', param } })

  it('the same page again is not complete (was complete, no match, after reading page 1 three times), naming pagination.param', async () => {
    const envelope = await search(connectorAt(upstream.origin, list('page')), { status: 'past_due' })
    assertNotComplete(envelope, 'SOURCE_UNAVAILABLE', 'pagination.param "page"')
  })

  it('the right parameter walks every page and finds the matches', async () => {
    const envelope = await search(connectorAt(upstream.origin, list('p')), { status: 'past_due' })
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(
      envelope.items.map((i) => i.id),
      ITEMS.filter((i) => i.status === 'past_due').map((i) => i.id),
    )
  })
})
