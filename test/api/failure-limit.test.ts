import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { FAILURE_WINDOW_MS, MAX_FAILURES, createFailureLimit } from '../../src/api/failure-limit.js'

/**
 * The per-address failure limit on its own clock (authentication and review sign-in both use it; their HTTP
 * tests are test/api/authenticate.test.ts and test/ui/sign-in-limit.test.ts).
 */
describe('failure limit', () => {
  const at = (start: number) => {
    const clock = { now: start }
    return { clock, limit: createFailureLimit({ now: () => clock.now }) }
  }

  test('blocked only from the 20th failure in the window on, for what is left of the minute from the first failure', () => {
    const { clock, limit } = at(1_000_000)
    for (let i = 1; i < MAX_FAILURES; i++) limit.fail('a')
    assert.equal(limit.blockedFor('a'), null, '19 failures do not block')
    clock.now += 30_000
    limit.fail('a')
    assert.equal(limit.blockedFor('a'), 30, 'the window runs from the first failure, not the last')
    clock.now = 1_000_000 + FAILURE_WINDOW_MS - 1
    assert.equal(limit.blockedFor('a'), 1)
    clock.now = 1_000_000 + FAILURE_WINDOW_MS
    assert.equal(limit.blockedFor('a'), null)
    assert.equal(limit.blockedFor('b'), null, 'another address was never blocked')
  })

  test('a failure at the end of the window starts a new count from one', () => {
    const { clock, limit } = at(5_000)
    for (let i = 0; i < MAX_FAILURES; i++) limit.fail('a')
    clock.now += FAILURE_WINDOW_MS
    for (let i = 1; i < MAX_FAILURES; i++) limit.fail('a')
    assert.equal(limit.blockedFor('a'), null, '19 failures in the new window do not block')
    limit.fail('a')
    assert.equal(limit.blockedFor('a'), 60)
  })

  test('past 10,000 addresses the counts are dropped, not grown without bound; at 10,000 they are kept', () => {
    const { limit } = at(0)
    for (let i = 0; i < MAX_FAILURES; i++) limit.fail('a')
    for (let i = 1; i < 10_000; i++) limit.fail(`10.0.${i >> 8}.${i & 255}`)
    assert.equal(limit.blockedFor('a'), 60, '10,000 addresses are kept')
    limit.fail('10.255.255.255')
    assert.equal(limit.blockedFor('a'), null, 'the 10,001st drops them all')
  })
})
