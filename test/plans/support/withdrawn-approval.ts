import assert from 'node:assert/strict'
import type { Caller } from '../../operations/support/flow.js'
import type { GatewayFixture } from '../../support/gateway-fixture.js'

/**
 * The commit of a plan whose one approval was withdrawn: 403 `not_approved` with `reason`, no operation recorded, and
 * the plan's view pending with that approval `valid: false` and `not_counted: reason`. Returns the refusal and the view.
 */
export async function refusedCommit(fx: GatewayFixture, agent: Caller, plan: { plan_id: string; plan_digest: string }, reason: string) {
  const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `k-${plan.plan_id}` })
  assert.equal(commit.status, 403, `the commit was taken: ${JSON.stringify(commit.body)}`)
  assert.equal(commit.body.error.code, 'not_approved')
  assert.equal(commit.body.error.details.reason, reason, JSON.stringify(commit.body.error))
  const ops = await fx.gateway.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
  assert.deepEqual(ops, [], 'no operation was recorded')
  const view = await agent('GET', `/v1/plans/${plan.plan_id}`)
  assert.equal(view.body.state, 'pending')
  assert.equal(view.body.approvals.length, 1)
  assert.equal(view.body.approvals[0].valid, false)
  assert.equal(view.body.approvals[0].not_counted, reason)
  return { error: commit.body.error, view: view.body }
}
