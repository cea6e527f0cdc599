import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AGENT, createHarness } from './support/harness.js'

/**
 * During a Retry-After pause nothing is being written, so no target is `in_flight`: the retried target (and any
 * window after it) was claimed in flight at once and then waited out the pause there, so the view said a write
 * was under way for up to `max_retry_after_seconds`, and a crash meanwhile turned a target never sent into
 * `unknown` (reconciled, at best, to `failed` after the settle window). The executor now waits the pause out
 * before it claims. Virtual clock: the pacer's waits look at the ledger as they let the pause pass.
 */
describe('a Retry-After pause holds no target in flight', () => {
  for (const windowed of [false, true])
    test(`${windowed ? 'window by window' : 'target by target'}: in flight during the pause 0, every target written once`, async () => {
      let virtual = Date.parse('2030-01-01T00:00:00.000Z')
      const clock = () => new Date(virtual)
      let pausedFrom = 0
      let pausedUntil = 0
      const seen: number[] = []
      let h: Awaited<ReturnType<typeof createHarness>> | undefined
      const wait = async (ms: number) => {
        // from the pause's first second on: the 429's own target and a window claimed as it came are put back
        // as the pause starts (their ledger commits may still be under way at its first instant)
        if (h && virtual > pausedFrom && virtual < pausedUntil) {
          const row = await h.store.db.selectFrom('operation_targets').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'in_flight').executeTakeFirstOrThrow()
          seen.push(Number(row.n))
        }
        virtual += ms
        await new Promise((resolve) => setImmediate(resolve))
      }
      h = await createHarness('sqlite', { count: 6, clock, windowed, execution: { concurrency: 2 }, service: { wait } })
      try {
        h.upstream.retryAfterSeconds = 5
        h.upstream.behaviour = (id, call) => {
          if (id === 'u0001' && call === 1) {
            pausedFrom = virtual
            pausedUntil = virtual + 5_000
            return 'rate_limited'
          }
          return 'success'
        }
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: `k-pause-${windowed}` })
        const view = await h.operations.waitFor(receipt.operation_id, 60_000)
        assert.equal(view.state, 'succeeded', JSON.stringify(view))
        assert.ok(seen.length > 0, 'the pause was waited out')
        assert.deepEqual([...new Set(seen)], [0], `targets in flight while paused: ${seen.join(',')}`)
        assert.ok([...h.upstream.applied.values()].every((n) => n === 1) && h.upstream.applied.size === 6, 'each written once')
      } finally {
        await h.close()
      }
    })
})
