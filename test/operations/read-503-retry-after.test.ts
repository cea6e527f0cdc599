import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { allResults } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'

/**
 * A read's 503 with Retry-After was handled two ways: on the batch membership read it halted the whole
 * operation (`membership_unverifiable`), on the pre-write re-read it marked only that target `failed` and went
 * on. A read is safe to repeat and the upstream said when: both now take it as a 429 is taken (the operation
 * pauses for the Retry-After, within `max_retry_after_seconds` and `max_rate_limit_retries`, then reads again).
 * Without a Retry-After, a 503 keeps today's behaviour in both places (it says nothing about when to come back).
 */
const FIRST = userIdOf(1)

describe("a read's 503 with Retry-After pauses and reads again, like a 429", () => {
  // the batch's membership read (read 1 of the first user), or the target's own read before its write (read 2)
  for (const [name, limitedRead] of [['the batch membership read', 1], ['the pre-write re-read', 2]] as const) {
    test(`${name} answered 503 with Retry-After 1: paused, read again, every target written once`, () =>
      withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        let reads = 0
        ctx.upstream.onReadAnswer = (id) => (id === FIRST && ++reads === limitedRead ? [503, { error: 'maintenance' }, { 'retry-after': '1' }] : undefined)
        const id = await ctx.commit(`503-${limitedRead}`)
        const op = await ctx.finished(id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
        assert.deepEqual(ctx.upstream.writeLog, [FIRST, userIdOf(2)], 'each written once')
        const results = await allResults(ctx.agent, id)
        assert.ok(results.every((r) => r.outcome === 'succeeded'), JSON.stringify(results))
      }))

    test(`${name} answered 503 with Retry-After 86400: halted (retry_after_too_long), nothing written`, () =>
      withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        let reads = 0
        ctx.upstream.onReadAnswer = (id) => (id === FIRST && ++reads === limitedRead ? [503, { error: 'maintenance' }, { 'retry-after': '86400' }] : undefined)
        const op = await ctx.finished(await ctx.commit(`503-long-${limitedRead}`))
        assert.equal(op.state, 'halted', JSON.stringify(op))
        assert.equal(op.halt_reason.rule, 'retry_after_too_long')
        assert.match(op.halt_reason.message, /503/)
        assert.deepEqual([op.counts.pending, op.counts.failed], [2, 0])
        assert.deepEqual(ctx.upstream.writeLog, [])
      }))
  }

  test('without Retry-After, as before: the membership read halts (membership_unverifiable)', () =>
    withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
      let reads = 0
      ctx.upstream.onReadAnswer = (id) => (id === FIRST && ++reads === 1 ? [503, { error: 'maintenance' }] : undefined)
      const op = await ctx.finished(await ctx.commit('503-plain-1'))
      assert.equal(op.state, 'halted', JSON.stringify(op))
      assert.equal(op.halt_reason.rule, 'membership_unverifiable')
      assert.deepEqual(ctx.upstream.writeLog, [])
    }))

  test('without Retry-After, as before: the pre-write re-read fails that target only', () =>
    withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
      let reads = 0
      ctx.upstream.onReadAnswer = (id) => (id === FIRST && ++reads === 2 ? [503, { error: 'maintenance' }] : undefined)
      const id = await ctx.commit('503-plain-2')
      const op = await ctx.finished(id)
      assert.deepEqual([op.counts.failed, op.counts.succeeded], [1, 1], JSON.stringify(op))
      const failed = await allResults(ctx.agent, id, 'failed')
      assert.equal(failed[0].reason, 'reread_failed')
      assert.equal(failed[0].upstream_status, 503)
      assert.deepEqual(ctx.upstream.writeLog, [userIdOf(2)])
    }))
})
