import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decide, isWarrantError } from '../../src/contract/index.js'
import { createCursorCodec, queryFingerprint, searchAll } from '../../src/inventory/index.js'
import { createModelConnector, idOf, keysOf, seedCollection, type ReadFault } from '../support/model-connector.js'
import { TEST_CURSOR_KEY, TEST_SCOPE, cursorOf, followToEnd, manualClock, testCodec, walker } from './helpers.js'

const SOURCES = ['eu', 'us', 'apac'] as const

function sorted(values: Iterable<string>): string[] {
  return [...values].sort()
}

function codesOf(result: { incomplete_reasons: readonly { code: string }[] }): string[] {
  return result.incomplete_reasons.map((r) => r.code)
}

describe('searchAll: a whole walk', () => {
  it('walks every source in declared order to a terminal state: complete, every item once, one session, closed', async () => {
    const collection = seedCollection(SOURCES, [7, 0, 12])
    const connector = createModelConnector({ collection, snapshots: true, pageCap: 4 })
    const result = await walker(connector)({ pageSize: 5 })
    assert.equal(result.status, 'complete')
    assert.equal(result.complete, true)
    assert.deepEqual(result.incomplete_reasons, [])
    assert.equal(result.continuation, null)
    assert.deepEqual(keysOf(result.items), [...collection.keys()])
    assert.deepEqual([...new Set(result.items.map((i) => i.source))], ['eu', 'apac'])
    assert.equal(result.page.ordering, 'id ascending')
    assert.equal(result.page.requested_size, 5)
    assert.equal(result.page.pages_read, 2 + 1 + 3)
    assert.equal(result.scope.consistent_snapshot, true)
    assert.equal(result.scope.snapshot, `tx:${collection.tx}`)
    assert.deepEqual(result.scope.sources, [...SOURCES])
    assert.equal(connector.sessions.length, 1)
    assert.notEqual(connector.sessions[0]!.closedAt, null)
  })

  it('a short page never finishes a source: empty pages with a next position are followed', async () => {
    const collection = seedCollection(['only'], 10)
    const connector = createModelConnector({ collection, snapshots: true, shortPages: [0, 0, 3, 1, 0, 2] })
    const result = await walker(connector)({ pageSize: 50 })
    assert.equal(result.complete, true)
    assert.deepEqual(keysOf(result.items), [...collection.keys()])
    assert.equal(result.page.pages_read, connector.reads.length)
    assert.ok(result.page.pages_read >= 8, 'the empty pages were read past, not taken as the end')
  })

  it('a source ends only at next === null, even after a page that took the last items', async () => {
    const collection = seedCollection(['only'], 6)
    const connector = createModelConnector({ collection, snapshots: true, lazyEnd: true })
    const result = await walker(connector)({ pageSize: 3 })
    assert.equal(result.complete, true)
    assert.equal(result.page.pages_read, 3) // 3 + 3 + an empty last page
  })

  it('applies the filter through the connector; a complete empty result proves absence', async () => {
    const collection = seedCollection(SOURCES, 5)
    const connector = createModelConnector({ collection, snapshots: true })
    const result = await walker(connector)({ filter: { status: 'nobody-has-this' } })
    assert.equal(result.complete, true)
    assert.equal(result.items.length, 0)
    assert.equal(decide(result, 'prove_absence').decision, 'proceed')
  })

  it('the session is closed when a read throws, and the failure names the source', async () => {
    const collection = seedCollection(SOURCES, 3)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx) => (ctx.source === 'us' ? { kind: 'throw', message: 'socket hang up' } : undefined),
    })
    const result = await walker(connector)()
    assert.deepEqual(codesOf(result), ['SOURCE_UNAVAILABLE'])
    assert.equal(result.incomplete_reasons[0]!.source, 'us')
    assert.notEqual(connector.sessions[0]!.closedAt, null)
  })

  it('no session at all → upstream_unavailable error', async () => {
    const connector = createModelConnector({ collection: seedCollection(SOURCES, 1), snapshots: true, failOpen: true })
    await assert.rejects(walker(connector)(), (e: unknown) => isWarrantError(e) && e.code === 'upstream_unavailable')
  })

  it('a bad budget, page size or filter → invalid_request', async () => {
    const walk = walker(createModelConnector({ collection: seedCollection(SOURCES, 1), snapshots: true }))
    const bad = (e: unknown) => isWarrantError(e) && e.code === 'invalid_request'
    await assert.rejects(walk({}, { maxPages: 0 }), bad)
    await assert.rejects(walk({}, { maxItems: 1.5 }), bad)
    await assert.rejects(walk({}, { deadlineMs: -1 }), bad)
    await assert.rejects(walk({ pageSize: 0 }), bad)
    await assert.rejects(walk({ filter: { 'bad field': 1 } }), bad)
  })

  it('a deadline longer than a timer can hold is not taken as already past', async () => {
    const connector = createModelConnector({ collection: seedCollection(['a'], 3), snapshots: true })
    const result = await walker(connector)({}, { deadlineMs: 3_000_000_000 })
    assert.equal(result.complete, true)
  })

  it('the caller cancelling rejects the call and still closes the session', async () => {
    const collection = seedCollection(['only'], 10)
    const controller = new AbortController()
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => {
        if (ctx.readIndex === 1) {
          setTimeout(() => controller.abort(new Error('client went away')), 5)
          return { kind: 'delay', ms: 5_000 }
        }
      },
    })
    await assert.rejects(walker(connector)({ pageSize: 2 }, {}, { signal: controller.signal }), /client went away/)
    assert.notEqual(connector.sessions[0]!.closedAt, null)
  })
})

describe('searchAll: its own limits are reasons, with a cursor that resumes the same walk', () => {
  it('max_pages → CLIENT_LIMIT_REACHED {name: max_pages}, truncated, next_cursor; following it yields the rest exactly once', async () => {
    const collection = seedCollection(SOURCES, [9, 4, 6])
    const connector = createModelConnector({ collection, snapshots: true })
    const walk = walker(connector)
    const first = await walk({ pageSize: 2 }, { maxPages: 3 })
    assert.equal(first.complete, false)
    assert.equal(first.status, 'partial')
    assert.equal(first.truncated, true)
    assert.deepEqual(codesOf(first), ['CLIENT_LIMIT_REACHED'])
    assert.deepEqual(first.incomplete_reasons[0]!.limit, { name: 'max_pages', value: 3 })
    assert.equal(first.continuation?.kind, 'next_cursor')
    assert.equal(first.items.length, 6)

    const all = await followToEnd(walk, { pageSize: 2 }, { maxPages: 3 })
    assert.equal(all.last.complete, true)
    assert.deepEqual(sorted(keysOf(all.items)), sorted(collection.keys()))
    assert.equal(new Set(keysOf(all.items)).size, all.items.length)
  })

  it('max_items stops at a page boundary and never drops items of a page it received', async () => {
    const collection = seedCollection(SOURCES, [10, 10, 10])
    // This upstream ignores the page size it is asked for and always serves 4.
    const connector = createModelConnector({ collection, snapshots: true, pageCap: 4, ignoreRequestedSize: true })
    const walk = walker(connector)
    const first = await walk({ pageSize: 4 }, { maxItems: 6 })
    assert.deepEqual(codesOf(first), ['CLIENT_LIMIT_REACHED'])
    assert.deepEqual(first.incomplete_reasons[0]!.limit, { name: 'max_items', value: 6 })
    assert.equal(first.items.length, 8, 'the whole second page is kept')
    const all = await followToEnd(walk, { pageSize: 4 }, { maxItems: 6 })
    assert.deepEqual(sorted(keysOf(all.items)), sorted(collection.keys()))
    assert.equal(new Set(keysOf(all.items)).size, 30)
  })

  it('max_items asks the upstream for no more than the budget left', async () => {
    const collection = seedCollection(['only'], 20)
    const connector = createModelConnector({ collection, snapshots: true })
    const result = await walker(connector)({ pageSize: 8 }, { maxItems: 10 })
    assert.equal(result.items.length, 10)
    assert.deepEqual(connector.reads.map((r) => r.pageSize), [8, 2])
  })

  it('reaching max_items exactly at the end of the last source is complete, not a limit', async () => {
    const connector = createModelConnector({ collection: seedCollection(['a', 'b'], [3, 3]), snapshots: true })
    const result = await walker(connector)({ pageSize: 3 }, { maxItems: 6 })
    assert.equal(result.complete, true)
  })

  it('the deadline checked between pages → TIME_BUDGET_EXCEEDED with retry_with_deadline and the cursor', async () => {
    const clock = manualClock()
    const collection = seedCollection(SOURCES, 10)
    const connector = createModelConnector({ collection, snapshots: true, onRead: () => clock.advance(400) })
    const walk = walker(connector, { clock })
    const first = await walk({ pageSize: 5 }, { deadlineMs: 1000 })
    assert.deepEqual(codesOf(first), ['TIME_BUDGET_EXCEEDED'])
    assert.equal(first.truncated, false)
    assert.equal(first.items.length, 15)
    const c = first.continuation
    assert.ok(c && c.kind === 'retry_with_deadline')
    assert.equal(c.minimum_deadline_ms, 1000)
    assert.ok(c.cursor)
    const all = await followToEnd(walk, { pageSize: 5 }, { deadlineMs: 1000 })
    assert.deepEqual(sorted(keysOf(all.items)), sorted(collection.keys()))
  })

  it('the deadline aborts a slow page in flight; items already read are kept; the cursor resumes at that page', async () => {
    const collection = seedCollection(['a', 'b'], 6)
    let slow = true
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (slow && ctx.source === 'b' ? { kind: 'delay', ms: 10_000 } : undefined),
    })
    const walk = walker(connector)
    const started = Date.now()
    // Real time is the point (the deadline is a timer): 500 ms lets source a's in-memory pages finish on two busy
    // cores; the slow page takes 10 s.
    const first = await walk({ pageSize: 4 }, { deadlineMs: 500 })
    assert.ok(Date.now() - started < 5_000, 'did not wait for the slow page')
    assert.deepEqual(codesOf(first), ['TIME_BUDGET_EXCEEDED'])
    assert.equal(first.incomplete_reasons[0]!.source, 'b')
    assert.deepEqual(sorted(keysOf(first.items)), sorted([...collection.keys()].filter((k) => k.startsWith('a/'))))
    assert.equal(connector.reads.at(-1)!.signal?.aborted, true, 'the in-flight read was aborted')
    const c = first.continuation
    assert.ok(c && c.kind === 'retry_with_deadline' && c.cursor)
    assert.equal(c.minimum_deadline_ms, 1000, 'a page that alone outlasts the deadline needs a longer one')
    slow = false
    const rest = await walk({ pageSize: 4, cursor: c.cursor })
    assert.equal(rest.complete, true)
    assert.deepEqual(sorted(keysOf(rest.items)), sorted([...collection.keys()].filter((k) => k.startsWith('b/'))))
  })

  it('the deadline abandons a page whose upstream client ignores the abort signal', async () => {
    const connector = createModelConnector({
      collection: seedCollection(['a'], 3),
      snapshots: true,
      onRead: (): ReadFault => ({ kind: 'delay', ms: 4_000, ignoreAbort: true }),
    })
    const started = Date.now()
    const result = await walker(connector)({}, { deadlineMs: 200 })
    assert.ok(Date.now() - started < 3_000, 'returned at the deadline, not when the page ended')
    assert.deepEqual(codesOf(result), ['TIME_BUDGET_EXCEEDED'])
    assert.equal(result.items.length, 0)
    assert.equal(decide(result, 'prove_absence').decision, 'continue_search')
    assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
  })

  it("mode 'page': one upstream page, then MORE_PAGES_AVAILABLE with next_cursor", async () => {
    const collection = seedCollection(['a', 'b'], 3)
    const walk = walker(createModelConnector({ collection, snapshots: true }))
    const first = await walk({ pageSize: 2 }, {}, { mode: 'page' })
    assert.deepEqual(codesOf(first), ['MORE_PAGES_AVAILABLE'])
    assert.equal(first.truncated, false)
    assert.equal(first.items.length, 2)
    assert.equal(first.continuation?.kind, 'next_cursor')
    const all = await followToEnd(walk, { pageSize: 2 }, {}, { mode: 'page' })
    assert.equal(all.parts.length, 4)
    assert.equal(all.last.complete, true)
    assert.deepEqual(sorted(keysOf(all.items)), sorted(collection.keys()))
  })

  it('empty first page with more pages → continue_search; a change based on that absence → refuse_or_request_review, never proceed', async () => {
    const collection = seedCollection(['a'], 5)
    const walk = walker(createModelConnector({ collection, snapshots: true, shortPages: [0, 5] }))
    const first = await walk({}, {}, { mode: 'page' })
    assert.equal(first.items.length, 0)
    assert.equal(first.complete, false)
    assert.equal(decide(first, 'prove_absence').decision, 'continue_search')
    assert.equal(decide(first, 'change_from_absence').decision, 'refuse_or_request_review')
  })

  it('a walk stopped by max_pages after empty pages is empty and partial: never proof of absence', async () => {
    const walk = walker(createModelConnector({ collection: seedCollection(['a'], 5), snapshots: true, shortPages: [0] }))
    const result = await walk({}, { maxPages: 10 })
    assert.equal(result.items.length, 0)
    assert.deepEqual(codesOf(result), ['CLIENT_LIMIT_REACHED'])
    assert.notEqual(decide(result, 'prove_absence').decision, 'proceed')
    assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
  })
})

describe('searchAll: upstream facts become reasons', () => {
  it('rate_limited → RATE_LIMITED, retry_after with not_before from the clock and a cursor at the same position', async () => {
    const clock = manualClock(Date.parse('2025-03-08T14:20:11.000Z'))
    const collection = seedCollection(['a', 'b'], 6)
    let limited = true
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (limited && ctx.source === 'b' && ctx.position !== null ? { kind: 'rate_limited', retryAfterSeconds: 30 } : undefined),
    })
    const walk = walker(connector, { clock })
    const first = await walk({ pageSize: 4 })
    assert.deepEqual(codesOf(first), ['RATE_LIMITED'])
    assert.equal(first.incomplete_reasons[0]!.retry_after_seconds, 30)
    assert.equal(first.incomplete_reasons[0]!.source, 'b')
    const c = first.continuation
    assert.ok(c && c.kind === 'retry_after' && c.cursor)
    assert.equal(c.retry_after_seconds, 30)
    assert.equal(c.not_before, '2025-03-08T14:20:41.000Z')
    assert.equal(first.items.length, 6 + 4)
    assert.equal(decide(first, 'prove_absence').decision, 'retry_later')

    limited = false
    const positionBefore = connector.reads.at(-1)!.position
    const readsBefore = connector.reads.length
    await assert.rejects(walk({ pageSize: 4, cursor: c.cursor }), (error: unknown) => {
      assert.ok(isWarrantError(error) && error.code === 'rate_limited', String(error))
      assert.match(error.message, /wait 30 s more/)
      assert.deepEqual(error.details, { retry_after_seconds: 30, not_before: '2025-03-08T14:20:41.000Z' })
      return true
    })
    clock.advance(29_001)
    await assert.rejects(walk({ pageSize: 4, cursor: c.cursor }), /wait 1 s more/)
    assert.equal(connector.reads.length, readsBefore, 'a continuation followed before not_before reads nothing upstream')
    clock.advance(1_000)
    const rest = await walk({ pageSize: 4, cursor: c.cursor })
    assert.equal(connector.reads.at(-1)!.position, positionBefore, 'resumed at the same position')
    assert.equal(rest.complete, true)
    assert.deepEqual(sorted([...keysOf(first.items), ...keysOf(rest.items)]), sorted(collection.keys()))
  })

  it('unavailable → SOURCE_UNAVAILABLE naming the source; the other sources are still walked; the cursor retries only it', async () => {
    const collection = seedCollection(SOURCES, 4)
    let down = true
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (down && ctx.source === 'us' ? { kind: 'unavailable', status: 503 } : undefined),
    })
    const walk = walker(connector)
    const first = await walk({ pageSize: 3 })
    assert.deepEqual(codesOf(first), ['SOURCE_UNAVAILABLE'])
    const reason = first.incomplete_reasons[0]!
    assert.equal(reason.source, 'us')
    assert.equal(reason.upstream_status, 503)
    assert.deepEqual(sorted(new Set(first.items.map((i) => i.source))), ['apac', 'eu'])
    assert.equal(first.items.length, 8)
    assert.equal(first.truncated, false)
    // a 503 may clear with time: wait (a backoff, since the upstream gave no Retry-After), then retry only it
    assert.equal(reason.retry_after_seconds, 2)
    assert.equal(first.continuation?.kind, 'retry_after')
    assert.equal(decide(first, 'prove_absence').decision, 'retry_later')
    assert.equal(decide(first, 'change_from_absence').decision, 'refuse_or_request_review')

    down = false
    const rest = await walk({ pageSize: 3, cursor: cursorOf(first) }, {}, { clock: { now: () => Date.parse((first.continuation as { not_before: string }).not_before) } })
    assert.equal(rest.complete, true)
    assert.deepEqual(sorted(new Set(rest.items.map((i) => i.source))), ['us'])
    assert.equal(rest.items.length, 4)
  })

  it('a source failing after others returned results: their items are kept, the failure is named', async () => {
    const collection = seedCollection(SOURCES, 4)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (ctx.source === 'apac' && ctx.position !== null ? { kind: 'unavailable' } : undefined),
    })
    const result = await walker(connector)({ pageSize: 3 })
    assert.deepEqual(codesOf(result), ['SOURCE_UNAVAILABLE'])
    assert.equal(result.items.length, 4 + 4 + 3)
  })

  it('cursor_expired → CURSOR_EXPIRED naming the source, never restarted, no cursor continuation; the other sources are walked', async () => {
    const collection = seedCollection(SOURCES, 5)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (ctx.source === 'eu' && ctx.position !== null ? { kind: 'cursor_expired' } : undefined),
    })
    const result = await walker(connector)({ pageSize: 2 })
    assert.deepEqual(codesOf(result), ['CURSOR_EXPIRED'])
    assert.equal(result.incomplete_reasons[0]!.source, 'eu')
    assert.equal(result.continuation, null)
    assert.equal(result.items.filter((i) => i.source === 'eu').length, 2, 'not restarted from the beginning')
    assert.equal(result.items.length, 2 + 5 + 5)
    assert.equal(connector.reads.filter((r) => r.source === 'eu' && r.position === null).length, 1)
    assert.equal(decide(result, 'prove_absence').decision, 'retry_later')
    assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
  })

  it('an expired source beside the walk own page budget: no continuation to merge it into, retry_later for the whole attempt', async () => {
    const collection = seedCollection(SOURCES, 5)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (ctx.source === 'eu' && ctx.position !== null ? { kind: 'cursor_expired' } : undefined),
    })
    const all = await followToEnd(walker(connector), { pageSize: 2 }, { maxPages: 2 })
    assert.equal(all.parts.length, 1, 'an expired part is never merged into a continued walk')
    assert.deepEqual(codesOf(all.last), ['CURSOR_EXPIRED', 'CLIENT_LIMIT_REACHED'])
    assert.equal(all.last.continuation, null)
    assert.equal(decide(all.last, 'prove_absence').decision, 'retry_later')
  })

  it('our own cursor past its maximum age → CURSOR_EXPIRED, no items, no continuation, nothing read', async () => {
    const clock = manualClock()
    const connector = createModelConnector({ collection: seedCollection(['a'], 10), snapshots: true })
    const walk = walker(connector, { clock })
    const first = await walk({ pageSize: 2 }, { maxPages: 1 })
    clock.advance(60 * 60 * 1000 + 1)
    const reads = connector.reads.length
    const later = await walk({ pageSize: 2, cursor: cursorOf(first) })
    assert.deepEqual(codesOf(later), ['CURSOR_EXPIRED'])
    assert.equal(later.items.length, 0)
    assert.equal(later.continuation, null)
    assert.equal(later.scope.consistent_snapshot, false)
    assert.equal(connector.reads.length, reads, 'not restarted')
    assert.equal(decide(later, 'prove_absence').decision, 'retry_later')
  })

  it('upstreamIncomplete RESULT_LIMIT_REACHED → that code naming the source, truncated, narrow_query', async () => {
    const collection = seedCollection(['a', 'b'], 5)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (ctx.source === 'a' ? { kind: 'incomplete', code: 'RESULT_LIMIT_REACHED', limit: 3, stop: true } : undefined),
    })
    const result = await walker(connector)({ pageSize: 3 })
    assert.deepEqual(codesOf(result), ['RESULT_LIMIT_REACHED'])
    assert.equal(result.incomplete_reasons[0]!.source, 'a')
    assert.deepEqual(result.incomplete_reasons[0]!.limit, { name: 'upstream_result_limit', value: 3 })
    assert.equal(result.truncated, true)
    assert.equal(result.continuation?.kind, 'narrow_query')
    assert.equal(result.items.length, 3 + 5)
    assert.equal(decide(result, 'change_from_absence').decision, 'refuse_or_request_review')
  })

  it('upstreamIncomplete TIME_BUDGET_EXCEEDED on one page → that code naming the source; the source is not counted complete', async () => {
    const collection = seedCollection(['a'], 6)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (ctx.readIndex === 0 ? { kind: 'incomplete', code: 'TIME_BUDGET_EXCEEDED' } : undefined),
    })
    const result = await walker(connector)({ pageSize: 3 })
    assert.deepEqual(codesOf(result), ['TIME_BUDGET_EXCEEDED'])
    assert.equal(result.incomplete_reasons[0]!.source, 'a')
    assert.equal(result.truncated, false)
    assert.equal(result.complete, false)
    assert.equal(result.items.length, 6)
  })

  it('restricted visibility → VISIBILITY_RESTRICTED (complete: false) without naming hidden records', async () => {
    const collection = seedCollection(['a'], 3)
    const connector = createModelConnector({ collection, snapshots: true })
    const result = await searchAll(connector, { resource: 'subscriptions', filter: {} }, {}, {
      scope: { ...TEST_SCOPE, restricted: true, visibility: 'subscriptions of team blue' },
      cursorCodec: testCodec(),
    })
    assert.deepEqual(codesOf(result), ['VISIBILITY_RESTRICTED'])
    assert.equal(result.complete, false)
    assert.equal(result.truncated, false)
    assert.equal(result.items.length, 3)
    assert.match(result.incomplete_reasons[0]!.message, /subscriptions of team blue/)
    assert.equal(result.incomplete_reasons[0]!.source, undefined)
    assert.equal(decide(result, 'prove_absence').decision, 'refuse_or_request_review')
    assert.equal(decide(result, 'report').decision, 'proceed')
  })
})

describe('searchAll: snapshots, resumed walks and duplicates', () => {
  it('a resumed walk on a snapshot connector is consistent only if the snapshot is the very same', async () => {
    const collection = seedCollection(['a'], 10)
    const connector = createModelConnector({ collection, snapshots: true })
    const walk = walker(connector)
    const first = await walk({ pageSize: 3 }, { maxPages: 1 })
    assert.equal(first.scope.consistent_snapshot, true)
    const second = await walk({ pageSize: 3, cursor: cursorOf(first) }, { maxPages: 1 })
    assert.equal(second.scope.consistent_snapshot, true, 'no write in between: same snapshot identifier')
    collection.update('a', idOf(9), { status: 'cancelled' })
    const third = await walk({ pageSize: 3, cursor: cursorOf(second) }, { maxPages: 1 })
    assert.equal(third.scope.consistent_snapshot, false, 'a new snapshot: the parts are not one snapshot')
    assert.notEqual(third.scope.snapshot, first.scope.snapshot)
    collection.update('a', idOf(8), { status: 'cancelled' })
    const fourth = await walk({ pageSize: 3, cursor: cursorOf(third) })
    assert.equal(fourth.scope.consistent_snapshot, false, 'once broken, stays broken')
    assert.equal(fourth.complete, true)
  })

  it('a connector without a snapshot says consistent_snapshot: false', async () => {
    const connector = createModelConnector({ collection: seedCollection(['a'], 4), snapshots: false })
    const result = await walker(connector)()
    assert.equal(result.complete, true)
    assert.equal(result.scope.consistent_snapshot, false)
    assert.equal(result.scope.snapshot, null)
  })

  it('a snapshot session does not see writes made between its pages', async () => {
    const collection = seedCollection(['a'], 6)
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx) => {
        if (ctx.sessionReadIndex === 1) {
          collection.remove('a', idOf(5))
          collection.insert('a', idOf(99), { n: 99 })
        }
      },
    })
    const before = [...collection.keys()]
    const result = await walker(connector)({ pageSize: 2 })
    assert.equal(result.complete, true)
    assert.deepEqual(keysOf(result.items), before)
  })

  it('live reads: a record moved by an update comes back once; ORDER_FALLBACK warning and SNAPSHOT_INVALIDATED', async () => {
    const collection = seedCollection(['a'], 6)
    const connector = createModelConnector({
      collection,
      snapshots: false,
      ordering: 'updated',
      onRead: (ctx) => {
        if (ctx.sessionReadIndex === 1) collection.update('a', idOf(0), { status: 'touched' })
      },
    })
    const result = await walker(connector)({ pageSize: 2 })
    const ids = result.items.map((i) => i.id)
    assert.equal(new Set(ids).size, ids.length, 'never an item twice')
    assert.equal(ids.length, 6)
    assert.deepEqual(codesOf(result), ['SNAPSHOT_INVALIDATED'])
    assert.equal(result.incomplete_reasons[0]!.source, 'a')
    assert.equal(result.warnings.length, 1)
    assert.equal(result.warnings[0]!.code, 'ORDER_FALLBACK')
    assert.deepEqual((result.warnings[0]!.details as { dropped_duplicate_ids: string[] }).dropped_duplicate_ids, [idOf(0)])
    assert.equal(result.continuation, null)
    assert.equal(decide(result, 'prove_absence').decision, 'retry_later')
  })

  it('a snapshot upstream that repeats a record: dropped, ORDER_FALLBACK warning, still complete', async () => {
    const collection = seedCollection(['a'], 4)
    const repeat = { id: idOf(0), version: 'v1', fields: { n: 0 } }
    const connector = createModelConnector({
      collection,
      snapshots: true,
      onRead: (ctx): ReadFault | void => (ctx.sessionReadIndex === 1 ? { kind: 'extra', records: [repeat] } : undefined),
    })
    const result = await walker(connector)({ pageSize: 2 })
    assert.equal(result.complete, true)
    assert.equal(result.items.length, 4)
    assert.deepEqual(result.warnings.map((w) => w.code), ['ORDER_FALLBACK'])
    assert.equal(result.warnings[0]!.source, 'a')
  })

  it('a keyset snapshot upstream that repeats a record: its ids are not unique, so not complete, naming the id', async () => {
    const collection = seedCollection(['a'], 4)
    const repeat = { id: idOf(0), version: 'v1', fields: { n: 0 } }
    const connector = createModelConnector({
      collection,
      snapshots: true,
      positions: 'keyset',
      onRead: (ctx): ReadFault | void => (ctx.sessionReadIndex === 1 ? { kind: 'extra', records: [repeat] } : undefined),
    })
    const result = await walker(connector)({ pageSize: 2 })
    assert.equal(result.complete, false)
    assert.equal(result.items.length, 4)
    assert.deepEqual(result.incomplete_reasons.map((r) => [r.code, r.source]), [['SOURCE_UNAVAILABLE', 'a']])
    assert.match(result.incomplete_reasons[0]!.message, new RegExp(`record\\(s\\) with an id already read \\("${idOf(0)}"\\) though it reads in id order: its ids are not unique`))
    assert.notEqual(decide(result, 'prove_absence').decision, 'proceed')
  })

  it('the same id in two sources is two records (ids are per source)', async () => {
    const connector = createModelConnector({ collection: seedCollection(['a', 'b'], 2), snapshots: true })
    const result = await walker(connector)()
    assert.deepEqual(keysOf(result.items), ['a/r00000', 'a/r00001', 'b/r00000', 'b/r00001'])
    assert.equal(result.warnings.length, 0)
  })
})

describe('searchAll: cursors are bound to their walk', () => {
  const collection = seedCollection(['a', 'b'], 5)
  const connector = createModelConnector({ collection, snapshots: true })
  const walk = walker(connector)
  const invalid = (e: unknown) => isWarrantError(e) && e.code === 'invalid_cursor'

  it('a forged cursor → invalid_cursor', async () => {
    const forged = createCursorCodec({ key: 'an-attacker-key-an-attacker-key-!!' }).encode({
      fingerprint: queryFingerprint({ resource: 'subscriptions', filter: {} }, TEST_SCOPE.environment),
      snapshot: null,
      consistent: false,
      sources: [
        { source: 'a', position: null, finished: true, gaps: [] },
        { source: 'b', position: null, finished: true, gaps: [] },
      ],
    })
    await assert.rejects(walk({ cursor: forged }), invalid)
  })

  it('an altered or truncated cursor → invalid_cursor', async () => {
    const first = await walk({ pageSize: 2 }, { maxPages: 1 })
    const cursor = cursorOf(first)!
    const flipped = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11)
    await assert.rejects(walk({ pageSize: 2, cursor: flipped }), invalid)
    await assert.rejects(walk({ pageSize: 2, cursor: cursor.slice(0, -1) }), invalid)
  })

  it('a cursor used for another resource, filter or field set → invalid_cursor', async () => {
    const first = await walk({ pageSize: 2, fields: ['status'] }, { maxPages: 1 })
    const cursor = cursorOf(first)!
    await assert.rejects(walk({ pageSize: 2, fields: ['status'], cursor, resource: 'invoices' }), invalid)
    await assert.rejects(walk({ pageSize: 2, fields: ['status'], cursor, filter: { status: 'active' } }), invalid)
    await assert.rejects(walk({ pageSize: 2, fields: ['status', 'n'], cursor }), invalid)
    // page size is not part of the query's identity
    const more = await walk({ pageSize: 3, fields: ['status'], cursor })
    assert.equal(more.complete, true)
  })

  it('a cursor used in another environment, or signed by another gateway key → invalid_cursor', async () => {
    const first = await walk({ pageSize: 2 }, { maxPages: 1 })
    const cursor = cursorOf(first)!
    await assert.rejects(
      searchAll(connector, { resource: 'subscriptions', filter: {}, cursor }, {}, {
        scope: { ...TEST_SCOPE, environment: 'other' },
        cursorCodec: testCodec(),
      }),
      invalid,
    )
    await assert.rejects(
      searchAll(connector, { resource: 'subscriptions', filter: {}, cursor }, {}, {
        scope: TEST_SCOPE,
        cursorCodec: createCursorCodec({ key: `${TEST_CURSOR_KEY}-rotated` }),
      }),
      invalid,
    )
  })

  it('a cursor for a connector whose sources changed → invalid_cursor', async () => {
    const first = await walk({ pageSize: 2 }, { maxPages: 1 })
    const other = createModelConnector({ collection: seedCollection(['a', 'b', 'c'], 1), snapshots: true })
    await assert.rejects(walker(other)({ pageSize: 2, cursor: cursorOf(first) }), invalid)
  })
})
