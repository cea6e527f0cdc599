import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, beforeEach, describe, test } from 'node:test'
import { decide, envelopeSchema, type Envelope } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import type { Budget } from '../../../src/inventory/search-types.js'
import { cursorExpiresAfter, renameField, startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js'
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
      const one = /^\/items\/([^/]+)$/.exec(req.url.pathname)
      if (one) {
        const item = items.find((i) => i.id === one[1])
        return item ? sendJson(res, 200, item) : sendJson(res, 404, { error: 'not found' })
      }
      const from = Number(req.url.searchParams.get('cursor') ?? req.url.searchParams.get('offset') ?? 0)
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
    style = 'cursor'
  })

  // Generous timeouts: two test files share two busy cores; only the hang test needs the timeout to fire.
  let timeoutMs = 5000
  let style: 'cursor' | 'offset' = 'cursor'
  const connector = () =>
    createHttpConnector({
      resource: httpResource({
        timeout_ms: timeoutMs,
        sources: [{ name: 'main', base_url: proxy.origin }],
        list: { path: '/items', page_size_param: 'limit', pagination: style === 'cursor' ? { style: 'cursor' } : { style: 'offset' } },
      }),
    })
  const search = async (cursor: string | null = null, budget: Budget = {}, clock?: { now(): number }): Promise<Envelope<{ id: string }>> =>
    envelopeSchema.parse(
      await searchAll(connector(), { resource: 'items', filter: {}, pageSize: 10, cursor }, budget, { scope, cursorCodec: codec, ...(clock ? { clock } : {}) }),
    ) as unknown as Envelope<{ id: string }>
  const cursorOf = (envelope: Envelope<unknown>): string => {
    const continuation = envelope.continuation as { cursor?: string } | null
    assert.ok(continuation?.cursor, `a continuation with a cursor: ${JSON.stringify(envelope.continuation)}`)
    return continuation.cursor
  }
  /** Finishes the walk with the fault gone; the two parts together hold every record exactly once. */
  const finishesWithEverything = async (first: Envelope<{ id: string }>) => {
    proxy.clear()
    timeoutMs = 5000
    // a retry_after continuation is refused before its not_before: resume as a caller that waited
    const c = first.continuation
    const rest = await search(cursorOf(first), {}, c?.kind === 'retry_after' ? { now: () => Math.max(Date.now(), Date.parse(c.not_before)) } : undefined)
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
    // the hang must outlast it; the answered pages before it must not, on two busy cores
    timeoutMs = 2000
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

  test('a field renamed mid-walk (schema drift): SHAPE_MISMATCH names the field and counts the records, never "absent"', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (req.url.pathname === '/items' && req.count > start + 2 ? renameField('items', 'status', 'state') : undefined))
    const walk = (filter: Record<string, string>) =>
      searchAll(connector(), { resource: 'items', filter, pageSize: 10 }, {}, { scope, cursorCodec: codec }).then((e) => envelopeSchema.parse(e))
    const envelope = await walk({ status: 'past_due' })
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
    assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(reason.fields, ['status'])
    assert.equal(reason.record_count, 20, 'the two drifted pages, 10 records each')
    // What the two good pages matched is returned; nothing from the drifted pages is judged either way.
    assert.deepEqual(envelope.items.map((i) => i.id), items.slice(0, 20).filter((i) => i.status === 'past_due').map((i) => i.id))
    assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
    assert.notEqual(decide(envelope, 'change_from_absence').decision, 'proceed')
  })

  test('a read by id answered with another record: that id fails, it is never taken for the record asked for', async () => {
    proxy.rule((req) => (req.url.pathname === '/items/r002' ? { kind: 'rewrite', transform: () => items[4] } : undefined))
    const result = await connector().readByIds(['r001', 'r002'])
    assert.deepEqual([...result.records.keys()], ['r001'])
    assert.equal(result.failed.length, 1)
    assert.equal(result.failed[0]!.id, 'r002')
    assert.match(result.failed[0]!.message, /r005/)
  })

  test('a 503 with Retry-After: SOURCE_UNAVAILABLE says what the source answered, retry_after, decide says retry later; after the wait the walk finishes', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (onPage(start + 2)(req) ? { kind: 'status', status: 503, body: { error: 'overloaded' }, headers: { 'retry-after': '1' } } : undefined))
    const envelope = await search()
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
    assert.match(reason.message, /answered 503/)
    assert.equal(envelope.continuation?.kind, 'retry_after')
    assert.equal(decide(envelope, 'prove_absence').decision, 'retry_later')
    // no real wait for the Retry-After: finishesWithEverything resumes on a clock past the continuation's not_before
    await finishesWithEverything(envelope)
  })

  test('visibility that shrinks mid-walk (403 on a later page): VISIBILITY_RESTRICTED, absence refused, the refused request never sent again', async () => {
    const start = proxy.seen.length
    proxy.rule((req) => (req.url.pathname === '/items' && req.count >= start + 3 ? { kind: 'status', status: 403, body: { message: 'token scope no longer covers these records' } } : undefined))
    let envelope = await search()
    assert.equal(envelope.complete, false)
    assert.ok(envelope.incomplete_reasons.some((r) => r.code === 'VISIBILITY_RESTRICTED'), JSON.stringify(envelope.incomplete_reasons))
    assert.equal(decide(envelope, 'prove_absence').decision, 'refuse_or_request_review')
    const refused = proxy.seen.filter((r) => r.fault === 'status').length
    for (let i = 0; i < 3 && envelope.continuation; i++) {
      const cursor = (envelope.continuation as { cursor?: string }).cursor
      if (!cursor) break
      envelope = await search(cursor)
    }
    assert.equal(proxy.seen.filter((r) => r.fault === 'status').length, refused, 'following continuations never repeats the refused request')
  })

  test('records deleted between offset pages: every record that existed throughout is returned, no id twice, and absence is proven only then', async () => {
    style = 'offset'
    const start = proxy.seen.length
    const survivors = items.filter((_, i) => i !== 3 && i !== 4).map((i) => i.id)
    proxy.rule((req) => (onPage(start + 2)(req) ? { kind: 'before', effect: () => items.splice(3, 2) } : undefined))
    const envelope = await search()
    const ids = envelope.items.map((i) => i.id)
    assert.equal(new Set(ids).size, ids.length, 'no id twice')
    // Nothing in these answers (no total, no has_more) lets the walk prove the data held still through its last
    // page: it may list what it saw, but it never proves absence.
    assert.equal(envelope.scope.stability, 'unproven')
    assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
    assert.notEqual(decide(envelope, 'change_from_absence').decision, 'proceed')
    for (const id of survivors) assert.ok(ids.includes(id), `${id} existed throughout the walk and is in it`)
  })

  test('records inserted behind an offset cursor: never returned twice', async () => {
    style = 'offset'
    const start = proxy.seen.length
    proxy.rule((req) =>
      onPage(start + 2)(req) ? { kind: 'before', effect: () => items.unshift({ id: 'r000', status: 'active', amount: 0, version: 1 }) } : undefined,
    )
    const envelope = await search()
    const ids = envelope.items.map((i) => i.id)
    assert.equal(new Set(ids).size, ids.length, 'no id twice')
    if (envelope.complete) assert.ok(collection(40).every((i) => ids.includes(i.id)), 'a complete walk holds every record that existed throughout')
  })
})
