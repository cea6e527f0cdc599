import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import { createPlanService } from '../../src/plans/index.js'
import type { Catalogue, Resource } from '../../src/resources/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * An approval's lifetime came from the policy stored at proposal. After the operator shortened
 * `approval.ttl_minutes` (from a day to 5 minutes, say, after an incident), an approval given on a plan proposed
 * before still lasted the old day, and the review page said so. As with the reviewer count (policy-tightened.test.ts),
 * a decision and the view now take the stricter of the TTL stored and the one the config asks now.
 */
function changed(catalogue: Catalogue, edit: (r: Resource) => Resource): Catalogue {
  return { ...catalogue, get: (name) => edit(catalogue.get(name)), list: () => catalogue.list().map(edit) }
}

describe('approval TTL shortened between proposal and approval (sqlite store)', () => {
  let fx: GatewayFixture
  before(async () => {
    // the selection lives 30 minutes: under the stored day, an approval lasted those 30
    fx = await startDemoGateway({ store: 'sqlite', count: 200, serve: false, edit: (c) => void (c.resources.subscriptions.approval = { ttl_minutes: 1440 }) })
  })
  /** The plan service of a gateway restarted on the same store with `approval.ttl_minutes` edited. */
  const plansWithTtl = (ttl: number) =>
    createPlanService({
      store: fx.gateway.store,
      catalogue: changed(fx.gateway.catalogue, (r) => ({ ...r, config: { ...r.config, approval: { ...r.config.approval, ttl_minutes: ttl } } })),
      selections: fx.gateway.selections,
      execution: fx.gateway.config.execution,
      cursorCodec: fx.gateway.cursorCodec,
    })
  after(async () => {
    await fx?.close()
  })

  test('an approval given after the config shortened the TTL lasts the shorter TTL, and the view says so', async () => {
    const agent: Actor = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    const reviewer: Actor = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
    const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'us' } })
    const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'pause_collection', params: { reason: 'ttl' } } })
    assert.equal(plan.approval.ttl_minutes, 1440)
    const shorter = plansWithTtl(5)
    assert.equal((await shorter.view(reviewer, plan.plan_id)).approval.ttl_minutes, 5)
    const approval = await shorter.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    const lasts = Date.parse(approval.expires_at!) - Date.parse(approval.decided_at)
    assert.ok(lasts <= 5 * 60_000, `the approval lasts ${lasts / 60_000} minutes, the config asks 5`)
    // a longer TTL in the config than at proposal never lengthens it
    const longer = plansWithTtl(100_000)
    assert.equal((await longer.view(reviewer, plan.plan_id)).approval.ttl_minutes, 1440)
  })
})
