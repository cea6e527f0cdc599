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

  test('past 10,000 addresses, ended windows and then unblocked addresses are dropped, oldest first: a flood of sources never unblocks the address that was guessing', () => {
    const { clock, limit } = at(0)
    for (let i = 0; i < MAX_FAILURES; i++) limit.fail('a')
    limit.fail('early')
    clock.now = FAILURE_WINDOW_MS / 2
    for (let i = 1; i < 10_000; i++) limit.fail(`10.0.${i >> 8}.${i & 255}`)
    for (let i = 1; i < 50; i++) limit.fail(`10.1.0.${i}`)
    assert.equal(limit.blockedFor('a'), 30, 'the guessing address is still blocked')
    // the flood's own addresses went, oldest first: the first of them again counts from one
    for (let i = 0; i < MAX_FAILURES - 1; i++) limit.fail('10.0.0.1')
    assert.equal(limit.blockedFor('10.0.0.1'), null)
    limit.fail('10.0.0.1')
    assert.equal(limit.blockedFor('10.0.0.1'), 60)
    // once the guessing address's window has ended, it is what goes first
    clock.now = FAILURE_WINDOW_MS
    limit.fail('10.2.0.1')
    assert.equal(limit.blockedFor('a'), null)
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
