import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { FAILURE_WINDOW_MS, MAX_FAILURES, clientKey, createFailureLimit } from '../../src/api/failure-limit.js'

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

  // An address with 19 failures is a probe: one more blocks it if it was kept; if it was dropped, its count
  // starts again and one more does not.
  const kept = (limit: ReturnType<typeof createFailureLimit>, address: string) => {
    limit.fail(address)
    return limit.blockedFor(address) !== null
  }
  const failTimes = (limit: ReturnType<typeof createFailureLimit>, address: string, n: number) => {
    for (let i = 0; i < n; i++) limit.fail(address)
  }
  const flood = (limit: ReturnType<typeof createFailureLimit>, n: number, prefix = '10.0') => {
    for (let i = 0; i < n; i++) limit.fail(`${prefix}.${i >> 8}.${i & 255}`)
  }

  test('10,000 addresses are all kept; the 10,001st drops the oldest unblocked one, never the address that was guessing', () => {
    const { limit } = at(0)
    failTimes(limit, 'guessing', MAX_FAILURES)
    failTimes(limit, 'oldest', MAX_FAILURES - 1)
    failTimes(limit, 'second', MAX_FAILURES - 1)
    flood(limit, 9_997)
    assert.equal(kept(limit, 'oldest'), true, 'at 10,000 nothing was dropped')
    // 'oldest' is blocked now: the next oldest unblocked address is the one to go
    flood(limit, 1, '10.9')
    assert.equal(limit.blockedFor('guessing'), 60)
    assert.equal(limit.blockedFor('oldest'), 60)
    assert.equal(kept(limit, 'second'), false, 'the oldest unblocked address was dropped')
  })

  test('past 10,000 addresses, windows that ended go first, exactly at their end', () => {
    const { clock, limit } = at(0)
    failTimes(limit, 'ended', MAX_FAILURES)
    clock.now = FAILURE_WINDOW_MS / 2
    failTimes(limit, 'probe', MAX_FAILURES - 1)
    flood(limit, 9_998)
    clock.now = FAILURE_WINDOW_MS
    flood(limit, 1, '10.9')
    assert.equal(kept(limit, 'probe'), true, 'the ended window went, not the oldest live address')
    assert.equal(limit.blockedFor('ended'), null)
  })

  test('when every other address is blocked, the oldest blocked one goes, not the address failing now', () => {
    const { limit } = at(0)
    failTimes(limit, 'first', MAX_FAILURES)
    for (let i = 1; i < 10_000; i++) failTimes(limit, `10.0.${i >> 8}.${i & 255}`, MAX_FAILURES)
    failTimes(limit, 'newcomer', MAX_FAILURES - 1)
    assert.equal(limit.blockedFor('first'), null, 'the oldest blocked address was dropped')
    assert.equal(limit.blockedFor('10.0.0.1'), 60, 'the next one is still blocked')
    assert.equal(kept(limit, 'newcomer'), true, 'the address failing now was counted all along')
  })

  test('an IPv6 peer counts by its /64: one host cannot spread its guesses over its addresses', () => {
    const { limit } = at(0)
    for (let i = 0; i < MAX_FAILURES; i++) limit.fail(clientKey(`2001:db8:1:2::${(i + 1).toString(16)}`))
    assert.equal(limit.blockedFor(clientKey('2001:0db8:0001:0002:ffff:0:0:9')), 60)
    assert.equal(limit.blockedFor(clientKey('2001:db8:1:3::1')), null, 'another /64 is another client')
    assert.equal(clientKey('::ffff:192.0.2.7'), '192.0.2.7', 'an IPv4 peer on a dual-stack socket is that IPv4 address')
    assert.equal(clientKey('192.0.2.7'), '192.0.2.7')
    assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
  })
})
