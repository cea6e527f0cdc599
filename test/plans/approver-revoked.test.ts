import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { caller } from '../operations/support/flow.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { openReviewSession } from '../support/review-session.js'
import { STORE_KINDS } from '../support/stores.js'
import { refusedCommit } from './support/withdrawn-approval.js'

/**
 * An approval is the act of a person at a time, with a token. When that token is revoked (it leaked), its principal
 * disabled or no longer a reviewer, the approval must stop authorising a commit: whoever held the token may have given
 * it. It counted: `warrant token revoke` on the token an approval was given with left the plan approved and the
 * commit went through (202). The refusal now names why, and the plan's view and review page show it.
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'approver revoked' } }
const FILTERS = [{ status: 'past_due', region: 'us' }, { status: 'past_due', region: 'apac' }, { status: 'active', region: 'eu' }, { status: 'canceled', region: 'us' }]

for (const kind of STORE_KINDS) {
  describe(`an approval whose approver lost the right to give it no longer counts (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 300 })
    let n = 0

    /** A fresh reviewer approves a fresh plan over HTTP; the plan is approved. */
    async function approvedPlan() {
      n += 1
      const issued = await env.fx.gateway.principals.issue({ name: `carol-${n}`, role: 'reviewer' })
      const agent = env.fx.as('agent')
      const sel = await agent('POST', '/v1/resources/subscriptions/selections', { filter: FILTERS[n % FILTERS.length] })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
      const approved = await caller(env.fx.base, issued.token)('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })
      assert.equal(approved.status, 201, JSON.stringify(approved.body))
      assert.equal(approved.body.plan_state, 'approved')
      return { plan: plan.body, issued }
    }

    test('the token the approval was given with is revoked: the commit is refused (approver_revoked), the view and the review page say so', async () => {
      const { plan, issued } = await approvedPlan()
      await env.fx.gateway.principals.revoke(issued.token_id)
      const { error } = await refusedCommit(env.fx, env.fx.as('agent'), plan, 'approver_revoked')
      assert.match(error.message, /carol-\d+/)
      assert.match(error.message, /revoked/)

      const bob = await openReviewSession(env.fx.base, env.fx.tokens.reviewer2)
      const page = await bob.get(`/review/plans/${plan.plan_id}`)
      assert.equal(page.status, 200)
      assert.match(page.html, /data-testid="not-counted"[^>]*>[\s\S]*?carol-\d+[\s\S]*?token it was given with was revoked/)

      // the same person, with a new token, approves again: that approval is hers now, and counts
      const fresh = await env.fx.gateway.principals.addToken({ principal: issued.name })
      const again = await caller(env.fx.base, fresh.token)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      assert.equal(again.status, 201, JSON.stringify(again.body))
      assert.equal(again.body.counted, true)
      assert.equal(again.body.plan_state, 'approved')
      const commit = await env.fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `k2-${plan.plan_id}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
    })

    test('another token of the approver is revoked: the approval still counts', async () => {
      const { plan, issued } = await approvedPlan()
      const other = await env.fx.gateway.principals.addToken({ principal: issued.name })
      await env.fx.gateway.principals.revoke(other.token_id)
      const view = await env.fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(view.body.state, 'approved')
      assert.equal(view.body.approvals[0].not_counted, null)
    })

    test('the approver is disabled: refused (approver_disabled)', async () => {
      const { plan, issued } = await approvedPlan()
      await env.fx.gateway.store.db.updateTable('principals').set({ disabled_at: env.fx.gateway.store.now() }).where('id', '=', issued.principal_id).execute()
      const { error } = await refusedCommit(env.fx, env.fx.as('agent'), plan, 'approver_disabled')
      assert.match(error.message, /disabled/)
    })

    test('the approver is no longer a reviewer: refused (approver_not_reviewer)', async () => {
      const { plan, issued } = await approvedPlan()
      await env.fx.gateway.store.db.updateTable('principals').set({ role: 'agent' }).where('id', '=', issued.principal_id).execute()
      await refusedCommit(env.fx, env.fx.as('agent'), plan, 'approver_not_reviewer')
    })

    test("the approver's scope no longer covers the action: refused (approver_out_of_scope)", async () => {
      const { plan, issued } = await approvedPlan()
      const narrow = JSON.stringify({ resources: ['subscriptions'], actions: ['resume_collection'] })
      await env.fx.gateway.store.db.updateTable('principals').set({ scopes: narrow }).where('id', '=', issued.principal_id).execute()
      await refusedCommit(env.fx, env.fx.as('agent'), plan, 'approver_out_of_scope')
    })
  })
}
