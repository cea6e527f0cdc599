import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { configProblems, parseConfigInput } from '../support/config-input.js'

/**
 * `notifications.retry.initial_backoff_ms` above `max_backoff_ms` (600000 and 1000: the two swapped, or the initial
 * written in another unit) was accepted and every retry waited max_backoff_ms: a receiver that was down got its six
 * attempts within seconds, not the spacing written. Refused at load, naming both keys and values.
 */
describe('webhook retry backoff bounds in the wrong order', () => {
  test('initial_backoff_ms above max_backoff_ms is refused naming both; equal is taken', () => {
    const raw = parseConfigInput()
    raw.notifications = { webhooks: [], retry: { initial_backoff_ms: 600_000, max_backoff_ms: 1000 } }
    const problems = configProblems(() => parseConfig(raw))
    assert.deepEqual(problems.map((p) => p.key), ['notifications.retry.initial_backoff_ms'])
    assert.match(problems[0]!.message, /600000.*above.*max_backoff_ms.*1000/)
    raw.notifications.retry = { initial_backoff_ms: 1000, max_backoff_ms: 1000 }
    assert.equal(parseConfig(raw).notifications.retry.max_backoff_ms, 1000)
  })
})
