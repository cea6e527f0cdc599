import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlanService } from '../../src/plans/index.js'
import { createSelectionService } from '../../src/selections/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { caller } from '../operations/support/flow.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A review decision gets the same scope refusals as proposing and committing: the reviewer's token must cover
 * the plan's resource and its action (the rule of `planInActionScope`), or the decision is refused and nothing
 * is recorded.
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'reviewer action scope' } }

for (const kind of STORE_KINDS) {
  describe(`a reviewer's action scope (${kind} store)`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 300 })
    })
    after(async () => {
      await fx?.close()
    })

    async function pausePlan(filter: Record<string, unknown>) {
      const agent = fx.as('agent')
      const sel = await agent('POST', '/v1/resources/subscriptions/selections', { filter })
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
      return plan.body
    }

    test('a reviewer scoped to resume_collection cannot approve or reject a pause_collection plan', async () => {
      const narrow = await fx.gateway.principals.issue({ name: 'resume-only-reviewer', role: 'reviewer', scopes: { resources: ['subscriptions'], actions: ['resume_collection'] } })
      const reviewer = caller(fx.base, narrow.token)
      const plan = await pausePlan({ region: 'us', status: 'past_due' })

      for (const decision of ['approve', 'reject'] as const) {
        const refused = await reviewer('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision, expected_plan_digest: plan.plan_digest })
        assert.equal(refused.status, 403, `${decision} by a reviewer outside the action's scope: ${JSON.stringify(refused.body)}`)
        assert.equal(refused.body.error.code, 'forbidden')
        assert.match(refused.body.error.message, /action "pause_collection" on "subscriptions" is outside this principal's scope/)
      }
      const view = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(view.body.state, 'pending')
      assert.equal(view.body.approvals.length, 0, 'a refused decision records nothing')
      const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'scope-1' })
      assert.equal(commit.status, 403, JSON.stringify(commit.body))
      assert.equal(commit.body.error.code, 'not_approved')
    })

    test('a reviewer whose scope names the action (bare or resource-qualified) approves it', async () => {
      for (const [i, action] of ['pause_collection', 'subscriptions.pause_collection'].entries()) {
        const issued = await fx.gateway.principals.issue({ name: `pause-reviewer-${i}`, role: 'reviewer', scopes: { resources: ['subscriptions'], actions: [action] } })
        const plan = await pausePlan({ region: i === 0 ? 'eu' : 'apac', status: 'past_due' })
        const approved = await caller(fx.base, issued.token)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        assert.equal(approved.status, 201, JSON.stringify(approved.body))
        assert.equal(approved.body.plan_state, 'approved')
      }
    })

    // Two clocks stand for two reads of one clock; on PostgreSQL the decision reads the database's time once, with the plan's row.
    test('a selection that expires between the usability check and the decision\'s clock read: 410 naming the expiry, nothing recorded', { skip: kind === 'postgres' && 'the store\'s clock is the database\'s: no injected clock moves it' }, async () => {
      // The check read the selection service's clock and the decision read its own a moment later: two clocks two
      // minutes apart stand for a selection expiring in that moment. The approval was stored already lapsed (its
      // expiry the selection's, before its own time) and the answer said 201, `counted: true`, plan pending.
      let now = Date.now()
      const gw = fx.gateway
      const selections = createSelectionService({ store: gw.store, catalogue: gw.catalogue, cursorCodec: gw.cursorCodec, clock: () => new Date(now), defaultTtlMinutes: 30 })
      const plans = createPlanService({ store: gw.store, catalogue: gw.catalogue, selections, execution: gw.config.execution, clock: () => new Date(now + 120_000), cursorCodec: gw.cursorCodec })
      const agent = await gw.principals.authenticate(fx.tokens.agent, 'http')
      const reviewer = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
      const sel = await selections.create(agent, 'subscriptions', { filter: { status: 'active', region: 'eu' } })
      const plan = await plans.propose(agent, sel.selection_id, { action: PAUSE })
      now = Date.parse(sel.expires_at) - 60_000 // the check: a minute to go; the decision's read: a minute past
      await assert.rejects(plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest }), (e: any) => {
        assert.equal(e.code, 'expired')
        assert.equal(e.status, 410)
        assert.match(e.message, new RegExp(`expired at ${sel.expires_at}`))
        return true
      })
      assert.equal((await gw.store.db.selectFrom('approvals').select('id').where('plan_id', '=', plan.plan_id).execute()).length, 0, 'nothing recorded')
      assert.equal((await gw.store.db.selectFrom('plans').select('state').where('id', '=', plan.plan_id).executeTakeFirstOrThrow()).state, 'pending')
    })
  })
}
