import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import { createPlanService } from '../../src/plans/index.js'
import type { Catalogue, Resource } from '../../src/resources/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * The approval policy a commit enforced was the one stored at proposal. After the operator lowered
 * `two_reviewers_above` below the plan's target count (a restart on the edited config, as commit-guards.test.ts
 * simulates), a plan approved by one reviewer under the old policy still committed, though the resource now
 * demands two. A commit now meets the stricter of the policy stored and the one the config asks now.
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'probe' } }
function changed(catalogue: Catalogue, edit: (r: Resource) => Resource): Catalogue {
  return { ...catalogue, get: (name) => edit(catalogue.get(name)), list: () => catalogue.list().map(edit) }
}

describe('approval policy tightened between approval and commit (sqlite store)', () => {
  let fx: GatewayFixture
  let agent: Actor
  let reviewer: Actor
  let reviewer2: Actor
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 300, serve: false })
    agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    reviewer = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
    reviewer2 = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
  })
  after(async () => {
    await fx?.close()
  })

  test('a one-reviewer approval does not commit once the resource requires two reviewers for that count', async () => {
    const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { region: 'us', status: 'past_due' } })
    assert.ok(selection.count > 5)
    const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: PAUSE })
    assert.equal(plan.approval.reviewers_needed, 1)
    await fx.gateway.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    const stricter = createPlanService({
      store: fx.gateway.store,
      catalogue: changed(fx.gateway.catalogue, (r) => ({ ...r, config: { ...r.config, approval: { ...r.config.approval, two_reviewers_above: 5 } } })),
      selections: fx.gateway.selections,
      execution: fx.gateway.config.execution,
      cursorCodec: fx.gateway.cursorCodec,
    })
    await assert.rejects(stricter.assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => {
      assert.equal(e.code, 'not_approved')
      assert.match(e.message, /needs 2 distinct reviewer approval\(s\) .*since it was proposed the resource asks two distinct reviewers above 5 targets .*; it has 1/)
      return true
    })
    // the plan as the stricter config shows it is pending, two needed, one still to come
    const view = await stricter.view(reviewer, plan.plan_id)
    assert.deepEqual([view.state, view.approval.reviewers_needed, view.approval_state.still_needed], ['pending', 2, 1])
    // the config as it was still commits with one; a second reviewer meets the stricter one
    assert.equal((await fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest)).approvals.length, 1)
    await fx.gateway.plans.decide(reviewer2, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    assert.equal((await stricter.assertCommittable(agent, plan.plan_id, plan.plan_digest)).approvals.length, 2)
  })
})
