import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import type { Actor } from '../../src/contract/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser, newContext, signIn } from '../ui/support.js'

/**
 * A rejected plan is final: proposing the same action on the same selection answers that plan again (200, created
 * false, still rejected). Its commit refusal said "propose a new plan" and its review page "The agent can propose a
 * new plan", advice an agent followed into a loop of the same rejected plan. Both now say what does work: a new
 * selection, then the proposal on it.
 */
describe('a rejected plan: the refusal and the page say how to try again, and that way works', () => {
  let fx: GatewayFixture
  let browser: Browser
  let agent: Actor
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 200 })
    browser = await launchBrowser()
    agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('commit refusal and review page name a new selection; proposing again on this one is this rejected plan', async () => {
    const action = { type: 'pause_collection', params: { reason: 'rejected advice' } }
    const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'eu' } })
    const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action })
    const reviewer = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
    await fx.gateway.plans.decide(reviewer, plan.plan_id, { decision: 'reject', expected_plan_digest: plan.plan_digest })

    const refusal = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'rejected-advice' })
    assert.equal(refusal.status, 409)
    assert.doesNotMatch(refusal.body.error.message, /propose a new plan/)
    assert.match(refusal.body.error.message, /new selection/)

    // what "propose again" on this selection gives: the same rejected plan, so the advice must not be that
    const again = await fx.as('agent')('POST', `/v1/selections/${selection.selection_id}/plans`, { action })
    assert.deepEqual([again.status, again.body.plan_id, again.body.state], [200, plan.plan_id, 'rejected'])
    // what the advice says instead works: a new selection takes a new, pending plan
    const fresh = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'eu' } })
    const next = await fx.as('agent')('POST', `/v1/selections/${fresh.selection_id}/plans`, { action })
    assert.deepEqual([next.status, next.body.state], [201, 'pending'])

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/plans/${plan.plan_id}`)
    const why = await page.getByTestId('cannot-approve').innerText()
    assert.match(why, /rejected/)
    assert.doesNotMatch(why, /propose a new plan/)
    assert.match(why, /new selection/)
  })
})
