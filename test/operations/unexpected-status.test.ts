import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withUsersGateway } from './support/users-gateway.js'

/**
 * The action declares `expect.status: [204]`; the upstream answers 200 with the record (a common REST shape the
 * config did not describe). Before, the first target was recorded `failed` (effect_contradicted) on the status
 * alone: the record had changed, but a `failed` target is never compensated, so the compensation said there was
 * nothing to undo. Now the record is re-read: it holds the approved effect, so the target is `succeeded` (reason
 * unexpected_status) and compensable, and the operation still halts there, since the upstream does not behave as
 * approved. An upstream that wrote another value is `failed` with what the re-read showed; its record changed all
the same, so the compensation restores it (before, it too said there was nothing to undo).
 */
for (const kind of STORE_KINDS) {
  describe(`a success status the action does not expect (${kind} store)`, () => {
    test('the record holds the effect: succeeded (unexpected_status), halted at that target, and compensable', () =>
      withUsersGateway(
        kind,
        3,
        { concurrency: 1, batch_size: 10 },
        async ({ upstream, agent, reviewer }) => {
          const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
          const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `unexpected-${kind}` })
          assert.equal(commit.status, 202, JSON.stringify(commit.body))
          const id = commit.body.operation_id
          const operation = await waitForOperation(agent, id)
          assert.equal(operation.state, 'halted')
          assert.equal(operation.halt_reason.rule, 'effect_contradicted')
          assert.equal(operation.halt_reason.target_id, userIdOf(1))
          assert.match(operation.halt_reason.message, /answered 200; the approved action expects 204/)
          assert.deepEqual(operation.counts, { pending: 2, in_flight: 0, succeeded: 1, failed: 0, skipped: 0, unknown: 0 })
          assert.equal(upstream.totalWrites(), 1)
          const [first] = await allResults(agent, id, 'succeeded')
          assert.deepEqual([first.id, first.reason, first.upstream_status, first.after], [userIdOf(1), 'unexpected_status', 200, { role: 'viewer' }])
          assert.match(first.error, /holds the approved effect at version 2/)

          const compensation = await agent('POST', `/v1/operations/${id}/compensation`)
          assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
          assert.equal(compensation.body.target_count, 1)
        },
        { expect_status: [204] },
      ))

    test('the record shows another value: failed (effect_contradicted) with what the re-read showed', () =>
      withUsersGateway(
        kind,
        2,
        { concurrency: 1, batch_size: 10 },
        async ({ upstream, agent, reviewer }) => {
          upstream.onWrite = () => ({ roleOverride: 'admin' })
          const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
          const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `unexpected-other-${kind}` })
          const id = commit.body.operation_id
          const operation = await waitForOperation(agent, id)
          assert.equal(operation.state, 'halted')
          assert.equal(operation.halt_reason.rule, 'effect_contradicted')
          assert.deepEqual(operation.counts, { pending: 1, in_flight: 0, succeeded: 0, failed: 1, skipped: 0, unknown: 0 })
          const [first] = await allResults(agent, id, 'failed')
          assert.deepEqual([first.reason, first.upstream_status, first.after], ['effect_contradicted', 200, { role: 'admin' }])
          assert.match(first.error, /answered 200; the approved action expects 204; re-read, field "role" is "admin" where "viewer" was approved/)

          // our write changed the record, though not as approved: the compensation restores it too
          upstream.onWrite = () => undefined
          const compensation = await agent('POST', `/v1/operations/${id}/compensation`)
          assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
          const undo = compensation.body
          assert.equal(undo.target_count, 1)
          for (const r of [reviewer].slice(0, Math.max(1, undo.approval.reviewers_needed))) {
            const approval = await r('POST', `/v1/plans/${undo.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: undo.plan_digest })
            assert.equal(approval.status, 201, JSON.stringify(approval.body))
          }
          const committed = await agent('POST', `/v1/plans/${undo.plan_id}/commit`, { expected_digest: undo.plan_digest }, { 'idempotency-key': `undo-other-${kind}` })
          assert.equal(committed.status, 202, JSON.stringify(committed.body))
          const restored = await waitForOperation(agent, committed.body.operation_id)
          // the compensation runs under the same expect.status: its one target is restored, and it halts there too
          assert.equal(restored.state, 'halted', JSON.stringify(restored.counts))
          assert.equal(restored.halt_reason.rule, 'effect_contradicted')
          assert.equal(restored.counts.succeeded, 1)
          assert.deepEqual([upstream.users.get(userIdOf(1))!.role, upstream.users.get(userIdOf(2))!.role], ['member', 'member'])
        },
        { expect_status: [204] },
      ))
  })
}
