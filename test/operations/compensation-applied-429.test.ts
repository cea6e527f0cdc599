import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, waitForOperation } from './support/flow.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { userIdOf } from './support/users-upstream.js'

/**
 * A compensation's write the upstream applied and answered 429: on its retry the record no longer holds what the
 * operation wrote (our own undo restored it), so the per-target guard (`holds`) saw "the data moved on" and skipped
 * it `precondition_failed`, "nothing was written", before the check for a write answered 429 that may have landed
 * was reached. It is `unknown` (`rate_limited_applied`) as a plain operation's target is, never sent again.
 */
for (const kind of STORE_KINDS) {
  describe(`a compensation write answered 429 that the upstream applied (${kind} store)`, () => {
    test('is unknown on its retry, not skipped as changed by someone else', () =>
      withFaultGateway(kind, 2, { concurrency: 1, batch_size: 10, reconcile_settle_seconds: 0 }, async ({ upstream, agent, reviewer, commit, finished }) => {
        const first = await finished(await commit(`compensated-${kind}`))
        assert.equal(first.counts.succeeded, 2, JSON.stringify(first))
        const FIRST = userIdOf(1)
        let n = 0
        upstream.onWrite = (t) => {
          if (t.id !== FIRST || ++n > 1) return t.send(...t.apply())
          t.apply()
          t.send(429, { error: 'slow down' }, { 'retry-after': '1' })
        }
        const proposed = await agent('POST', `/v1/operations/${first.operation_id}/compensation`)
        assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
        const plan = proposed.body
        const approval = await reviewer('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'undo' })
        assert.equal(approval.status, 201, JSON.stringify(approval.body))
        const committed = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `undo-${kind}` })
        assert.equal(committed.status, 202, JSON.stringify(committed.body))
        const undo = await waitForOperation(agent, committed.body.operation_id)
        const target = (await allResults(agent, undo.operation_id)).find((r) => r.id === FIRST)
        assert.equal(upstream.users.get(FIRST)!.role, 'member', 'the undo landed')
        assert.equal(upstream.writes.get(FIRST), 2, 'one write, one undo: never sent again')
        assert.deepEqual([target.outcome, target.reason], ['unknown', 'rate_limited_applied'], JSON.stringify(target))
        assert.doesNotMatch(target.error ?? '', /nothing was written/)
        // reconcile settles it: the record holds the restored value at a new version
        const reconcile = await agent('POST', `/v1/operations/${undo.operation_id}/reconcile`)
        assert.equal(reconcile.status, 200, JSON.stringify(reconcile.body))
        const settled = (await allResults(agent, undo.operation_id)).find((r) => r.id === FIRST)
        assert.deepEqual([settled.outcome, settled.reason], ['succeeded', 'reconciled'], JSON.stringify(settled))
      }))
  })
}
