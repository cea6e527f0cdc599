import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'

const REASON = 'compensation guard test'

/**
 * A compensation restores each target's before-value only where the record still holds what the operation
 * wrote. Someone changed one record since (without its version moving, as an upstream without versions on that
 * field would): that target is skipped `precondition_failed` and keeps the newer value; the others are restored.
 * With the per-target precondition removed from the executor, the compensation overwrites the newer value.
 */
for (const kind of STORE_KINDS) {
  describe(`compensation never overwrites a record changed since the operation (${kind} store)`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 300 })
    })
    after(async () => {
      await fx?.close()
    })

    test('the changed target is skipped (precondition_failed) and keeps its newer value; the rest are restored', async () => {
      const agent = fx.as('agent')
      const reviewers = [fx.as('reviewer'), fx.as('reviewer2')]
      const { plan } = await selectProposeApprove(agent, reviewers, 'subscriptions', { filter: { status: 'past_due', collection: 'active', region: 'us' } }, { type: 'pause_collection', params: { reason: REASON } })
      assert.ok(plan.target_count >= 2, `${plan.target_count} targets`)
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `comp-guard-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(operation.state, 'succeeded')
      const ids = (await allResults(agent, commit.body.operation_id, 'succeeded')).map((r) => r.id as string)

      const upstream = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
      try {
        const changedId = ids[0]!
        upstream.prepare(`update subscriptions set pause_reason = 'a person paused it for another reason' where id = ?`).run(changedId)

        const compensation = await agent('POST', `/v1/operations/${commit.body.operation_id}/compensation`)
        assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
        const comp = compensation.body
        for (const reviewer of reviewers.slice(0, Math.max(1, comp.approval.reviewers_needed))) {
          const approval = await reviewer('POST', `/v1/plans/${comp.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: comp.plan_digest })
          assert.equal(approval.status, 201, JSON.stringify(approval.body))
        }
        const undo = await agent('POST', `/v1/plans/${comp.plan_id}/commit`, { expected_digest: comp.plan_digest }, { 'idempotency-key': `comp-guard-undo-${kind}` })
        assert.equal(undo.status, 202, JSON.stringify(undo.body))
        await waitForOperation(agent, undo.body.operation_id)
        const results = await allResults(agent, undo.body.operation_id)
        const changed = results.find((r) => r.id === changedId)
        assert.equal(changed.outcome, 'skipped', JSON.stringify(changed))
        assert.equal(changed.reason, 'precondition_failed')
        assert.deepEqual(
          results.filter((r) => r.id !== changedId).map((r) => r.outcome),
          ids.slice(1).map(() => 'succeeded'),
        )
        const rows = new Map((upstream.prepare(`select id, collection, pause_reason from subscriptions where id in (${ids.map(() => '?').join(',')})`).all(...ids) as any[]).map((r) => [r.id, r]))
        assert.deepEqual(rows.get(changedId), { id: changedId, collection: 'paused', pause_reason: 'a person paused it for another reason' }, 'the newer value was not overwritten')
        for (const id of ids.slice(1)) assert.deepEqual(rows.get(id), { id, collection: 'active', pause_reason: '' }, `${id} restored`)
      } finally {
        upstream.close()
      }
    })
  })
}
