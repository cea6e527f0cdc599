import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withUsersGateway } from './support/users-gateway.js'

/**
 * An asynchronous upstream answers each PATCH 202 Accepted and applies it later (a job queue, released here by
 * the test). The first target is `unknown` (effect_pending) and the operation halts on it: the later targets
 * stay pending, never sent. Reconciling before the job ran leaves it unknown (settling); once the upstream
 * shows the effect, reconciling records it `succeeded`. Before, the first target was `failed`
 * (effect_contradicted) though its write landed, and every later target was written blind.
 */
for (const kind of STORE_KINDS) {
  describe(`a write the upstream accepts (202) to apply later (${kind} store)`, () => {
    for (const expect_status of [[200], [200, 202]]) {
      test(`expect.status ${JSON.stringify(expect_status)}: unknown, halted at the first target; reconciled succeeded once it lands`, () =>
        withUsersGateway(
          kind,
          3,
          { concurrency: 1, batch_size: 10 },
          async ({ upstream, agent, reviewer }) => {
            let release = () => {}
            const queue = new Promise<void>((resolve) => (release = resolve))
            upstream.onWrite = () => ({ accept: queue })
            const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
            assert.equal(selection.count, 3)
            const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `accepted-${kind}-${expect_status.join('-')}` })
            assert.equal(commit.status, 202, JSON.stringify(commit.body))
            const id = commit.body.operation_id
            const operation = await waitForOperation(agent, id)
            assert.equal(operation.state, 'halted')
            assert.equal(operation.halt_reason.rule, 'effect_pending')
            assert.equal(operation.halt_reason.target_id, userIdOf(1))
            assert.match(operation.halt_reason.message, /202 Accepted/)
            assert.deepEqual(operation.counts, { pending: 2, in_flight: 0, succeeded: 0, failed: 0, skipped: 0, unknown: 1 })
            assert.equal(upstream.totalWrites(), 1, 'nothing more is sent to an upstream whose writes cannot be checked')
            const [first] = await allResults(agent, id, 'unknown')
            assert.deepEqual([first.id, first.reason, first.upstream_status], [userIdOf(1), 'effect_pending', 202])

            const early = await agent('POST', `/v1/operations/${id}/reconcile`)
            assert.equal(early.status, 200, JSON.stringify(early.body))
            assert.deepEqual([early.body.examined, early.body.succeeded, early.body.failed, early.body.still_unknown], [1, 0, 0, 1])
            assert.equal((await allResults(agent, id, 'unknown'))[0].reason, 'reconcile_settling')

            release()
            const deadline = Date.now() + 5000
            while (upstream.users.get(userIdOf(1))!.version !== 2) {
              if (Date.now() > deadline) assert.fail('the accepted write was never applied')
              await new Promise((r) => setTimeout(r, 10))
            }
            const settled = await agent('POST', `/v1/operations/${id}/reconcile`)
            assert.equal(settled.status, 200, JSON.stringify(settled.body))
            assert.deepEqual([settled.body.examined, settled.body.succeeded, settled.body.still_unknown], [1, 1, 0])
            const [done] = await allResults(agent, id, 'succeeded')
            assert.deepEqual([done.id, done.reason, done.after], [userIdOf(1), 'reconciled', { role: 'viewer' }])
            assert.deepEqual(settled.body.operation.counts, { pending: 2, in_flight: 0, succeeded: 1, failed: 0, skipped: 0, unknown: 0 })
            assert.equal(upstream.totalWrites(), 1, 'reconciliation never writes')
          },
          { expect_status },
        ))
    }
  })
}
