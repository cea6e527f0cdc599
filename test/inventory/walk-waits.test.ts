import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import { collection } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { decide } from '../../src/contract/index.js'
import { followToEnd, httpWalker } from './helpers.js'

/**
 * What a walk tells its caller to wait after an upstream's 429 or 503, read from real loopback upstreams. The
 * walk never sleeps: it stops at once with a `retry_after` continuation, so the wait it names is the whole
 * matter. A 429 without a usable Retry-After named a fixed 60 s (the write path's default) where a 5xx got the
 * walk's backoff of 2, 4, 8… s; a Retry-After beyond any bound (`99999999999999999999`) threw a RangeError
 * from the continuation's date (a 500 for an upstream's header), and one of a day named a continuation the
 * cursor's one-hour age makes impossible to follow. A wait longer than the bound
 * (`execution.max_retry_after_seconds`, default 300) is not promised: the source ends SOURCE_UNAVAILABLE naming it.
 */
const ITEMS = collection(10)

describe('the wait a walk names after a 429 or 503 (real loopback upstreams)', () => {
  let limited: TestUpstream
  let healthy: TestUpstream
  let answer: { status: number; retryAfter?: string } = { status: 429 }
  before(async () => {
    limited = await startUpstream((_req, res) => sendJson(res, answer.status, { error: 'not now' }, answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter }))
    healthy = await startUpstream((_req, res) => sendJson(res, 200, { items: ITEMS, next_cursor: null }))
  })
  after(async () => {
    await limited?.close()
    await healthy?.close()
  })
  beforeEach(() => {
    limited.seen.length = 0
  })

  // the upstreams listen only once `before` ran: the connector is built per test
  const search = (options: { maxRetryAfterSeconds?: number } = {}) => httpWalker({ limited: limited.origin, healthy: healthy.origin })({}, { deadlineMs: 30_000 }, options)

  test('a 429 without a usable Retry-After (none, negative, garbage) names the walk\'s backoff, bounded by the configured maximum, promptly', async () => {
    for (const retryAfter of [undefined, '-5', 'soon', '1.5']) {
      answer = { status: 429, ...(retryAfter === undefined ? {} : { retryAfter }) }
      const started = Date.now()
      const envelope = await search()
      assert.ok(Date.now() - started < 10_000, 'the walk answers at once, it never sleeps out the wait')
      assert.equal(envelope.complete, false)
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'RATE_LIMITED')
      assert.equal(reason?.retry_after_seconds, 2, `${retryAfter}: the first backoff step, not a fixed 60 s: ${JSON.stringify(envelope.incomplete_reasons)}`)
      assert.equal(envelope.continuation?.kind, 'retry_after')
      assert.equal((envelope.continuation as { retry_after_seconds: number }).retry_after_seconds, 2)
      assert.doesNotMatch(reason!.message, /60 s/)
    }
    answer = { status: 429 }
    const bounded = await search({ maxRetryAfterSeconds: 1 })
    assert.equal((bounded.continuation as { retry_after_seconds: number }).retry_after_seconds, 1, 'the backoff never passes the configured maximum')
  })

  test('Retry-After: 0 is taken as asked (continue at once)', async () => {
    answer = { status: 429, retryAfter: '0' }
    const envelope = await search()
    assert.equal((envelope.continuation as { retry_after_seconds: number }).retry_after_seconds, 0)
  })

  test('a Retry-After longer than the maximum (a day, an absurd number; 429 or 503) ends that source SOURCE_UNAVAILABLE naming the wait; the walk never throws and the other source is read', async () => {
    for (const [status, retryAfter] of [[429, '86400'], [429, '99999999999999999999'], [503, '9999999999999'], [503, '301']] as const) {
      answer = { status, retryAfter }
      const envelope = await search()
      assert.equal(envelope.complete, false)
      const reason = envelope.incomplete_reasons.find((r) => r.source === 'limited')
      assert.equal(reason?.code, 'SOURCE_UNAVAILABLE', `${status} ${retryAfter}: ${JSON.stringify(envelope.incomplete_reasons)}`)
      assert.equal(reason?.upstream_status, status)
      assert.match(reason!.message, /max_retry_after_seconds/)
      assert.match(reason!.message, /asks the walk to wait \d+ s, more than .* \(300 s/)
      // a wait is not a refusal: the same request, sent later, would be answered (the text said it "would fail the
      // same way", and no retry_after_seconds made the envelope say the failure was permanent)
      assert.doesNotMatch(reason!.message, /fail the same way/)
      assert.equal(reason?.retry_after_seconds, Number(retryAfter), 'the wait the upstream asked for, for a new walk')
      const at = Date.now() + Number(retryAfter) * 1000
      if (at < 8.64e15) assert.match(reason!.message, new RegExp(`a new walk can read them after ${new Date(at).toISOString().slice(0, 13)}`))
      else assert.match(reason!.message, /a new walk can read them once the upstream's wait is over/)
      assert.equal(decide(envelope, 'prove_absence').decision, 'retry_later', `${status} ${retryAfter}: ${decide(envelope, 'prove_absence').reason}`)
      assert.equal(envelope.items.length, ITEMS.length, 'the healthy source is still walked')
      assert.equal(envelope.continuation, null, 'nothing is left to continue: the limited source is not asked again')
    }
    // at the maximum itself the wait is promised
    answer = { status: 429, retryAfter: '300' }
    const envelope = await search()
    assert.equal((envelope.continuation as { retry_after_seconds: number }).retry_after_seconds, 300)
  })

  test('an upstream that rate limits the walk time after time ends its source saying the limit lifts with time, not that the request fails the same way', async () => {
    answer = { status: 429 }
    // the caller waits out each retry_after and follows, until the walk gives up on the source
    const { last } = await followToEnd(httpWalker({ limited: limited.origin, healthy: healthy.origin }), {}, { deadlineMs: 30_000 })
    const reason = last.incomplete_reasons.find((r) => r.source === 'limited')
    assert.equal(reason?.code, 'SOURCE_UNAVAILABLE', JSON.stringify(last.incomplete_reasons))
    assert.equal(reason?.upstream_status, 429)
    assert.match(reason!.message, /rate limited the walk 6 times in a row/)
    assert.doesNotMatch(reason!.message, /fail the same way/)
    assert.match(reason!.message, /a rate limit lifts with time/)
    assert.equal(typeof reason?.retry_after_seconds, 'number', 'the envelope says the failure may clear with time')
    assert.equal(last.continuation, null, 'this walk does not ask it again')
    assert.equal(decide(last, 'prove_absence').decision, 'retry_later')
  })
})
