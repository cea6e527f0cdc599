import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { collection, httpResource, idsOf, walk, type Item } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

const ITEMS = collection(23)
const ALL_IDS = ITEMS.map((i) => i.id)

function limitOf(url: URL, name: string, fallback = 5): number {
  return Number(url.searchParams.get(name) ?? fallback)
}

describe('cursor pagination', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const cursor = req.url.searchParams.get('cursor')
      const start = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString())
      // a short page in the middle: the upstream caps the page at 2 items at index 5
      const count = start === 5 ? 2 : limitOf(req.url, 'limit')
      const items = ITEMS.slice(start, start + count)
      const end = start + items.length
      sendJson(res, 200, { items, next_cursor: end < ITEMS.length ? Buffer.from(String(end)).toString('base64url') : null })
    })
  })
  after(() => upstream.close())

  it('walks to the end, every item exactly once, through a short page', async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', page_size_param: 'limit', pagination: { style: 'cursor' } },
      }),
    })
    const { records, results } = await walk(connector, 'main', 5)
    assert.deepEqual(idsOf(records), ALL_IDS)
    assert.ok(results.some((r) => r.kind === 'page' && r.items.length === 2 && r.next !== null), 'a short page did not end the walk')
    assert.equal(upstream.seen.at(-1)?.url.searchParams.get('limit'), '5')
  })
})

describe('offset pagination', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const offset = Number(req.url.searchParams.get('offset') ?? 0)
      // the read that re-checks item 4 (offset 4) comes back short: the boundary and one new item
      const count = offset === 4 ? 2 : limitOf(req.url, 'limit')
      const items = ITEMS.slice(offset, offset + count)
      sendJson(res, 200, req.url.pathname === '/with-total' ? { items, total: ITEMS.length } : { items })
    })
  })
  after(() => upstream.close())

  const resource = (path: string, extra: Record<string, unknown> = {}) =>
    httpResource({
      sources: [{ name: 'main', base_url: upstream.origin }],
      list: { path, page_size_param: 'limit', pagination: { style: 'offset' }, ...extra },
    })

  it('advances by the items received, not the page size, re-reads each previous last item, and ends only on an empty page', async () => {
    upstream.seen.length = 0
    const { records, results } = await walk(createHttpConnector({ resource: resource('/items') }), 'main', 5)
    assert.deepEqual(idsOf(records), ALL_IDS)
    // each read after the first starts one item early, asking for one more, to find the previous page's last item in place
    assert.deepEqual(
      upstream.seen.map((r) => [r.url.searchParams.get('offset'), r.url.searchParams.get('limit')]),
      // with neither has_more nor a total, only an empty page ends the walk, and that read cannot overlap
      [['0', '5'], ['4', '6'], ['5', '6'], ['10', '6'], ['15', '6'], ['20', '6'], ['22', '6'], ['23', '5']],
    )
    const end = results.at(-1)
    assert.equal(end?.kind === 'page' && end.unchecked, true)
    const last = results.at(-1)
    assert.ok(last?.kind === 'page' && last.items.length === 0 && last.next === null)
    const shortButNotLast = results.filter((r) => r.kind === 'page' && r.items.length > 0 && r.items.length < 5)
    assert.ok(shortButNotLast.every((r) => r.kind === 'page' && r.next !== null))
  })

  it('with total_path, ends when the offset reaches the total and reports the total', async () => {
    upstream.seen.length = 0
    const { records, results } = await walk(createHttpConnector({ resource: resource('/with-total', { total_path: 'total' }) }), 'main', 5)
    assert.deepEqual(idsOf(records), ALL_IDS)
    // the page the total ended (offset 20) is read past once, re-checking its last item: a short page proves no end
    assert.deepEqual(upstream.seen.slice(-2).map((r) => r.url.searchParams.get('offset')), ['20', '22'])
    assert.ok(results.every((r) => r.kind === 'page' && r.total === 23))
  })
})

describe('page-number pagination', () => {
  let upstream: TestUpstream
  // the upstream's own partition, with a short page in the middle
  const SIZES = [5, 2, 5, 5, 5, 1]
  const pages: Item[][] = []
  let at = 0
  for (const size of SIZES) {
    pages.push(ITEMS.slice(at, at + size))
    at += size
  }
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const page = Number(req.url.searchParams.get('page'))
      if (req.url.pathname === '/uneven') {
        const index = page - 1
        sendJson(res, 200, { results: pages[index] ?? [], meta: { has_more: index < pages.length - 1 } })
        return
      }
      const size = limitOf(req.url, 'per_page')
      const first = req.url.pathname === '/zero-based' ? 0 : 1
      sendJson(res, 200, { items: ITEMS.slice((page - first) * size, (page - first + 1) * size) })
    })
  })
  after(() => upstream.close())

  it('without has_more or total, a short last page is not the end; the empty page after it is', async () => {
    upstream.seen.length = 0
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', page_size_param: 'per_page', pagination: { style: 'page' } },
      }),
    })
    const { records } = await walk(connector, 'main', 5)
    assert.deepEqual(idsOf(records), ALL_IDS)
    assert.deepEqual(
      upstream.seen.map((r) => r.url.searchParams.get('page')),
      // page 0 once, after the first page: an upstream counting from 0 would hold records there (here it is empty)
      ['1', '0', '2', '3', '4', '5', '6'],
    )
  })

  it('starts at the configured first page', async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/zero-based', page_size_param: 'per_page', pagination: { style: 'page', first: 0 } },
      }),
    })
    const { records } = await walk(connector, 'main', 4)
    assert.deepEqual(idsOf(records), ALL_IDS)
  })

  it('follows has_more through a short middle page and stops when it is false', async () => {
    upstream.seen.length = 0
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/uneven', items_path: 'results', has_more_path: 'meta.has_more', pagination: { style: 'page' } },
      }),
    })
    const { records } = await walk(connector, 'main', 5)
    assert.deepEqual(idsOf(records), ALL_IDS)
    // no page size is sent, so no page can be told short: the end has_more says is tested by one read past it;
    // and page 0 is read once, to test that page 1 is the first
    assert.equal(upstream.seen.length, SIZES.length + 2)
  })
})

describe('Link header pagination', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const page = Number(req.url.searchParams.get('page') ?? 1)
      const size = limitOf(req.url, 'per_page')
      const items = ITEMS.slice((page - 1) * size, page * size)
      const last = Math.ceil(ITEMS.length / size)
      const links = [`<${upstream.origin}/items?page=1&per_page=${size}>; rel="first"`]
      if (page < last) {
        // alternate absolute and relative targets; both resolve to this origin
        const target = page % 2 === 1 ? `${upstream.origin}/items?page=${page + 1}&per_page=${size}` : `/items?page=${page + 1}&per_page=${size}`
        links.push(`<${target}>; rel="next"`)
      }
      links.push(`<${upstream.origin}/items?page=${last}&per_page=${size}>; rel="last"`)
      sendJson(res, 200, items, { link: links.join(', ') })
    })
  })
  after(() => upstream.close())

  it('follows rel="next" until there is none', async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', items_path: '', page_size_param: 'per_page', pagination: { style: 'link_header' } },
      }),
    })
    const { records, results } = await walk(connector, 'main', 5)
    assert.deepEqual(idsOf(records), ALL_IDS)
    assert.equal(results.length, 5)
  })
})

describe('next-link-in-body pagination', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      assert.equal(req.url.pathname, '/api/v1/items')
      const afterId = req.url.searchParams.get('after')
      const start = afterId === null ? 0 : ITEMS.findIndex((i) => i.id === afterId) + 1
      const items = ITEMS.slice(start, start + 6)
      const lastId = items.at(-1)?.id
      const next = start + items.length < ITEMS.length ? `/api/v1/items?after=${lastId}` : null
      sendJson(res, 200, { data: items, links: { next } })
    })
  })
  after(() => upstream.close())

  it('follows the body link under the base path until it is null', async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: `${upstream.origin}/api/v1` }],
        list: { path: '/items', items_path: 'data', pagination: { style: 'next_link', path: 'links.next' } },
      }),
    })
    const { records } = await walk(connector, 'main', 6)
    assert.deepEqual(idsOf(records), ALL_IDS)
  })
})

describe('property: offset walks over uneven pages', () => {
  let upstream: TestUpstream
  let scenario = { size: 0, caps: [] as number[] }
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const offset = Number(req.url.searchParams.get('offset'))
      const limit = Number(req.url.searchParams.get('limit'))
      // the upstream caps each page by its own rule (as a byte-limited API would)
      const cap = scenario.caps[offset % scenario.caps.length]!
      const items = collection(scenario.size).slice(offset, offset + Math.min(limit, cap))
      sendJson(res, 200, { items })
    })
  })
  after(() => upstream.close())

  it('every item is seen exactly once whatever the page size and the upstream caps', async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' } },
      }),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 5 }),
        async (size, pageSize, caps) => {
          scenario = { size, caps }
          const { records } = await walk(connector, 'main', pageSize, {}, 200)
          assert.deepEqual(idsOf(records), collection(size).map((i) => i.id))
        },
      ),
      { numRuns: 40 },
    )
  })
})
