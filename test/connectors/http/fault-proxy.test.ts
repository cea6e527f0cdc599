import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, beforeEach, describe, test } from 'node:test'
import { decide, envelopeSchema, type Envelope } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import type { Budget } from '../../../src/inventory/search-types.js'
import { cursorExpiresAfter, startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js'
import { collection, httpResource, type Item } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// Each fault the proxy injects between the http connector and an honest upstream maps to one reason code,
// and nothing is lost: the items returned are records that exist, no id comes twice, and following the
// continuation once the fault is gone finishes the same walk with every record.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'fault-proxy', visibility: 'all items', restricted: false }

describe('fault proxy in front of a cursor-paged upstream', () => {
  let items: Item[] = collection(40)
  let upstream: TestUpstream
  let proxy: FaultProxy
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('cursor') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 10)
      const next = from + size < items.length ? String(from + size) : null
      sendJson(res, 200, { items: items.slice(from, from + size), next_cursor: next })
    })
    proxy = await startFaultProxy({ target: upstream.origin })
  })
  after(async () => {
    await proxy?.close()
    await upstream?.close()
  })
  beforeEach(() => {
    proxy.clear()
    items = collection(40)
    timeoutMs = 5000
  })

  // Generous timeouts: two test files share two busy cores; only the hang test needs the timeout to fire.
  let timeoutMs = 5000
  const connector = () =>
    createHttpConnector({
      resource: httpResource({
        timeout_ms: timeoutMs,
        sources: [{ name: 'main', base_url: proxy.origin }],
        list: { path: '/items', page_size_param: 'limit', pagination: { style: 'cursor' } },
      }),
    })
  const search = async (cursor: string | null = null, budget: Budget = {}): Promise<Envelope<{ id: string }>> =>
    envelopeSchema.parse(await searchAll(connector(), { resource: 'items', filter: {}, pageSize: 10, cursor }, budget, { scope, cursorCodec: codec })) as unknown as Envelope<{ id: string }>
  const cursorOf = (envelope: Envelope<unknown>): string => {
    const continuation = envelope.continuation as { cursor?: string } | null
    assert.ok(continuation?.cursor, `a continuation with a cursor: ${JSON.stringify(envelope.continuation)}`)
    return continuation.cursor
  }
  /** Finishes the walk with the fault gone; the two parts together hold every record exactly once. */
  const finishesWithEverything = async (first: Envelope<{ id: string }>) => {
    proxy.clear()
    timeoutMs = 5000
    const rest = await search(cursorOf(first))
    assert.equal(rest.complete, true)
    const ids = [...first.items, ...rest.items].map((i) => i.id)
    assert.equal(new Set(ids).size, ids.length, 'no id twice')
    assert.deepEqual([...ids].sort(), items.map((i) => i.id).sort())
  }
  const onPage = (n: number) => (req: { url: URL; count: number }) => req.url.pathname === '/items' && req.count === n

  test('latency under the timeout: complete, every record once', async () => {
    proxy.rule(() => ({ kind: 'latency', ms: 20 }))
    const envelope = await search()
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.equal(envelope.items.length, 40)
    assert.ok(proxy.seen.every((r) => r.fault === 'latency'))
  })

  test('a page that never answers: not complete, names the source, the pages before it are kept', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (onPage(start + 3)(req) ? { kind: 'hang' } : undefined))
    timeoutMs = 1000
    const envelope = await search()
    assert.equal(envelope.complete, false)
    assert.equal(envelope.items.length, 20)
    assert.ok(envelope.incomplete_reasons.some((r) => r.source === 'main'), JSON.stringify(envelope.incomplete_reasons))
    assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
    await finishesWithEverything(envelope)
  })

  test('429 with Retry-After: RATE_LIMITED, retry_after carries the seconds, decide says retry later', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (onPage(start + 2)(req) ? { kind: 'rate_limit', retryAfterSeconds: 4 } : undefined))
    const envelope = await search()
    assert.equal(envelope.complete, false)
    assert.equal(envelope.incomplete_reasons[0]?.code, 'RATE_LIMITED')
    assert.equal(envelope.continuation?.kind, 'retry_after')
    assert.equal((envelope.continuation as { retry_after_seconds: number }).retry_after_seconds, 4)
    assert.equal(decide(envelope, 'prove_absence').decision, 'retry_later')
    assert.equal(envelope.items.length, 10)
  })

  test('a connection reset mid-walk: not complete with the source named; nothing from the broken page', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (onPage(start + 2)(req) ? { kind: 'reset' } : undefined))
    const envelope = await search()
    assert.equal(envelope.complete, false)
    assert.equal(envelope.items.length, 10)
    assert.ok(envelope.incomplete_reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE' && r.source === 'main'), JSON.stringify(envelope.incomplete_reasons))
    assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
  })

  test('a body cut short under its Content-Length: never parsed as a page, not complete', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (onPage(start + 2)(req) ? { kind: 'truncate', bytes: 60 } : undefined))
    const envelope = await search()
    assert.equal(envelope.complete, false)
    assert.equal(envelope.items.length, 10)
    assert.ok(envelope.incomplete_reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE' && r.source === 'main'), JSON.stringify(envelope.incomplete_reasons))
  })

  test('a cursor that expires after one use: CURSOR_EXPIRED, never restarted silently', async () => {
    const start = proxy.seen.length
    proxy.rule(cursorExpiresAfter('cursor', 1))
    const first = await search(null, { maxPages: 1 })
    assert.equal(first.complete, false)
    const cursor = cursorOf(first)
    const second = await search(cursor, { maxPages: 1 })
    assert.equal(second.items.length, 10)
    // The same continuation again: the upstream's cursor "10" is used up.
    const replay = await search(cursor, { maxPages: 1 })
    assert.equal(replay.complete, false)
    assert.ok(replay.incomplete_reasons.some((r) => r.code === 'CURSOR_EXPIRED'), JSON.stringify(replay.incomplete_reasons))
    assert.equal(replay.items.length, 0)
    assert.notEqual(decide(replay, 'prove_absence').decision, 'proceed')
    // No silent restart: the proxy never saw a request for the first page again after the expiry.
    const firstPageRequests = proxy.seen.slice(start).filter((r) => r.url.pathname === '/items' && !r.url.searchParams.has('cursor'))
    assert.equal(firstPageRequests.length, 1)
  })
})
