import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { runTwoInstanceTrial } from './support/two-instance-trial.js'

/**
 * Two `warrant serve` processes on one PostgreSQL store (the small size of bench/two-instance.ts): the one
 * running an operation is killed with SIGKILL, the other finishes it before the dead one's lease would have
 * expired; then a killed and restarted instance resumes its operation at once. The trial asserts that nothing
 * was written twice and that the ledger agrees with the upstream, phase by phase.
 */
describe('two instances on one PostgreSQL store', () => {
  test('the operation of a killed instance is taken over within its lease, a restarted one resumes its own, nothing is written twice', { timeout: 300_000 }, async () => {
    // a 20 s lease: the survivor's sweep comes every 10 s, a takeover that waited for expiry would come after it
    const report = await runTwoInstanceTrial({ targets: 300, leaseSeconds: 20, concurrency: 4, writeDelayMs: 10 })
    for (const phase of [report.takeover, report.restart]) {
      assert.equal(phase.max_writes_per_record, 1)
      assert.equal(phase.succeeded, phase.writes_applied)
      assert.ok(phase.lease_left_ms > 0)
    }
  })
})
