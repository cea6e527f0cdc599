import assert from 'node:assert/strict'
import fc from 'fast-check'
import { after, before, describe, test } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import type { Connector } from '../../src/connectors/index.js'
import { searchAll } from '../../src/inventory/index.js'
import { createTelemetry, instrumentConnector } from '../../src/telemetry/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

/**
 * An upstream paged by page number (`?page=3&per_page=100`: records 200 to 299), which gives no total and no
 * has_more: only an empty page ends it. Page 3 of 200 is other records than page 3 of 100, so a walk that
 * changed its page size between pages (a continuation asking another page_size, or the item budget trimming a
 * page) skipped records or read them twice. Without a total to compare, a walk that skipped 200 records ended
 * "complete".
 */
describe('a walk over page numbers asks every page at one size, its continuations included', () => {
  const records = Array.from({ length: 700 }, (_, i) => ({ id: `r${String(i).padStart(3, '0')}`, status: 'open', amount: i, version: 1 }))
  let upstream: TestUpstream
  let connector: Connector
  const sizes: number[] = []
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const page = Number(req.url.searchParams.get('page') ?? 1)
      const size = Number(req.url.searchParams.get('per_page') ?? 10)
      sizes.push(size)
      sendJson(res, 200, { items: records.slice((page - 1) * size, page * size) })
    })
    const config = httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/items', page_size_param: 'per_page', pagination: { style: 'page', param: 'page', first: 1 } } })
    // as the gateway holds it: instrumented (a wrapper that dropped the property would turn the rule off)
    connector = instrumentConnector(createHttpConnector({ resource: config }), 'items', createTelemetry())
  })
  after(() => upstream?.close())

  const codec = testCodec()
  const search = (pageSize: number, maxItems: number | undefined, cursor?: string) =>
    searchAll(connector, { resource: 'subscriptions', filter: {}, pageSize, ...(cursor ? { cursor } : {}) }, maxItems === undefined ? {} : { maxItems }, { scope: TEST_SCOPE, cursorCodec: codec })
  const cursorOf = (result: Awaited<ReturnType<typeof searchAll>>) => {
    assert.equal(result.continuation?.kind, 'next_cursor', JSON.stringify(result.incomplete_reasons))
    return (result.continuation as { cursor: string }).cursor
  }
  const assertEveryRecordOnce = (ids: readonly string[]) => {
    assert.equal(new Set(ids).size, ids.length, 'no record twice')
    assert.deepEqual([...ids].sort(), records.map((r) => r.id), 'every record')
  }

  for (const [first, then] of [
    [100, 200],
    [100, 50],
  ] as const)
    test(`a continuation asking page_size ${then} after pages of ${first}: every record once, complete`, async () => {
      sizes.length = 0
      const part1 = await search(first, 200)
      assert.equal(part1.items.length, 200)
      const part2 = await search(then, undefined, cursorOf(part1))
      assert.equal(part2.complete, true, JSON.stringify(part2.incomplete_reasons))
      assertEveryRecordOnce([...part1.items, ...part2.items].map((r) => r.id))
      assert.deepEqual([...new Set(sizes)], [first], 'every page asked at the first part\'s size')
      assert.equal(part2.page.requested_size, first, 'the answer says the size it read at')
    })

  test('an item budget that is not a multiple of the page size: pages are not trimmed, a part stops before the page that would pass its budget, nothing is taken for moved data', async () => {
    sizes.length = 0
    const ids: string[] = []
    let result = await search(100, 150)
    for (let parts = 1; ; parts++) {
      assert.ok(!result.incomplete_reasons.some((r) => r.code === 'SNAPSHOT_INVALIDATED'), JSON.stringify(result.incomplete_reasons))
      assert.ok(result.items.length <= 150, `a part never answers more than its budget: ${result.items.length}`)
      ids.push(...result.items.map((r) => r.id))
      if (result.complete) break
      assert.ok(parts < 10, 'the walk ends')
      result = await search(100, 150, cursorOf(result))
    }
    assertEveryRecordOnce(ids)
    assert.deepEqual([...new Set(sizes)], [100])
  })

  test('an item budget below the page size: the walk reads at the budget\'s size from its first part on', async () => {
    sizes.length = 0
    const part1 = await search(100, 30)
    assert.equal(part1.items.length, 30)
    const part2 = await search(100, undefined, cursorOf(part1))
    assert.equal(part2.complete, true)
    assertEveryRecordOnce([...part1.items, ...part2.items].map((r) => r.id))
    assert.deepEqual([...new Set(sizes)], [30])
  })

  test('property: any record count, any page size and item budget per part, with or without a total: every record once, the last part complete', async () => {
    const scenario = fc.record({
      count: fc.integer({ min: 0, max: 90 }),
      parts: fc.array(fc.record({ pageSize: fc.integer({ min: 1, max: 40 }), maxItems: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }) }), { minLength: 1, maxLength: 6 }),
      total: fc.boolean(),
    })
    const own = await startUpstream((req, res) => {
      const page = Number(req.url.searchParams.get('page') ?? 1)
      const size = Number(req.url.searchParams.get('per_page') ?? 10)
      const all = records.slice(0, current.count)
      sendJson(res, 200, { items: all.slice((page - 1) * size, page * size), ...(current.total ? { total: all.length } : {}) })
    })
    let current = { count: 0, total: false }
    try {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          current = s
          const list = { path: '/items', page_size_param: 'per_page', pagination: { style: 'page', param: 'page', first: 1 }, ...(s.total ? { total_path: 'total' } : {}) }
          const walker = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: own.origin }], list }) })
          const ids: string[] = []
          let cursor: string | undefined
          for (let i = 0; ; i++) {
            const part = s.parts[Math.min(i, s.parts.length - 1)]!
            const result = await searchAll(walker, { resource: 'subscriptions', filter: {}, pageSize: part.pageSize, ...(cursor ? { cursor } : {}) }, part.maxItems === undefined ? {} : { maxItems: part.maxItems }, { scope: TEST_SCOPE, cursorCodec: codec })
            ids.push(...result.items.map((r) => r.id))
            if (result.complete) break
            assert.ok(i < 200, 'the parts end')
            cursor = cursorOf(result)
          }
          assert.equal(new Set(ids).size, ids.length, 'no record twice')
          assert.deepEqual([...ids].sort(), records.slice(0, s.count).map((r) => r.id), 'every record')
          await walker.close()
        }),
        { numRuns: 60 },
      )
    } finally {
      await own.close()
    }
  })

  test('an upstream cursor that hides a page number (cursor paging): a continuation asking another size still reads every record once', async () => {
    const opaque = await startUpstream((req, res) => {
      const page = Number(Buffer.from(req.url.searchParams.get('cursor') ?? 'MQ', 'base64url').toString() || 1)
      const size = Number(req.url.searchParams.get('per_page') ?? 10)
      const items = records.slice((page - 1) * size, page * size)
      sendJson(res, 200, { items, next_cursor: items.length === 0 ? null : Buffer.from(String(page + 1)).toString('base64url') })
    })
    try {
      const walker = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: opaque.origin }], list: { path: '/items', page_size_param: 'per_page', pagination: { style: 'cursor' } } }) })
      const first = await searchAll(walker, { resource: 'subscriptions', filter: {}, pageSize: 100 }, { maxItems: 200 }, { scope: TEST_SCOPE, cursorCodec: codec })
      const rest = await searchAll(walker, { resource: 'subscriptions', filter: {}, pageSize: 200, cursor: cursorOf(first) }, {}, { scope: TEST_SCOPE, cursorCodec: codec })
      assert.equal(rest.complete, true, JSON.stringify(rest.incomplete_reasons))
      assertEveryRecordOnce([...first.items, ...rest.items].map((r) => r.id))
      await walker.close()
    } finally {
      await opaque.close()
    }
  })
})
