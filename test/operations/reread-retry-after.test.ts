import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { allResults } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'

/**
 * The re-read before a write answered 429 with `Retry-After: 2`: the target was read again after 1 s each
 * time, whatever the upstream asked (the read's 429 lost its header on the way to the executor), so an
 * upstream asking for 30 s was asked again every second and the operation halted after ten retries
 * (`rate_limit_retries`) while still inside its first wait. The re-read's Retry-After now pauses the operation
 * as a write's does. Real time: the waits are the behaviour (2 s asked, 1.8 s required between reads).
 */
describe('a rate limited re-read before a write honours Retry-After', () => {
  // the batch's membership read (reads 1, 2), or the target's own read just before its write (2, 3)
  for (const [name, limited] of [['the batch read', [1, 2]], ['the target read', [2, 3]]] as const)
  test(`${name}: each read again comes after the seconds the upstream asked for`, () =>
    withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
      const id = await commit(`reread-retry-after-${limited.join('-')}`)
      const reads: number[] = []
      upstream.onReadAnswer = (rid) => {
        if (rid !== userIdOf(1)) return undefined
        reads.push(performance.now())
        return (limited as readonly number[]).includes(reads.length) ? [429, { error: 'slow down' }, { 'retry-after': '2' }] : undefined
      }
      const op = await finished(id)
      assert.equal(op.state, 'succeeded', JSON.stringify(op))
      assert.ok(reads.length >= 4, `read ${reads.length} times`)
      const gaps = limited.map((n) => Math.round(reads[n]! - reads[n - 1]!))
      assert.ok(gaps.every((gap) => gap >= 1800), `read again after ${gaps.join(' and ')} ms; the upstream asked for 2 s`)
      const [first] = await allResults(agent, id)
      assert.equal(first.outcome, 'succeeded')
      assert.equal(upstream.writes.get(userIdOf(1)), 1, 'written once')
    }))
})
