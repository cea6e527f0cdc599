import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * The review pages judge expiry on the gateway's clock (the store's: what approvals and selections lapse by), and
 * printed their relative times ("in 30 min", "5 min ago") on the machine's wall clock: on a gateway whose clock is
 * not the wall's (an injected clock here; a store's clock elsewhere) a page said a selection that had not expired
 * "expires … (5 years ago)", or an expired one "expired … (in 30 min)". Every relative time is now read against the
 * same instant as the rest of the page.
 */
describe('review pages: relative times on the gateway clock', () => {
  // years from the wall clock, so a page reading the wall clock cannot pass by accident
  const clock = { now: Date.parse('2031-06-01T09:00:00.000Z') }
  let fx: GatewayFixture
  let upstream: OddUpstream
  let browser: Browser
  let plan: { plan_id: string; plan_digest: string; selection_id: string }

  before(async () => {
    upstream = await startOddUpstream()
    fx = await startDemoGateway({ store: 'sqlite', count: 20, clock: () => new Date(clock.now), edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    browser = await launchBrowser()
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const selection = await gw.selections.create(agent, 'things', { filter: { status: 'open' } })
    plan = { ...(await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })), selection_id: selection.selection_id }
    clock.now += 5 * 60_000
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await upstream?.close()
  })

  test('the selection, plan and queue pages say "5 min ago" and "in 25 min"; an approval "in 15 min"; an expired selection "5 min ago"', async () => {
    const page = await (await newContext(browser)).newPage()
    assert.equal(await signIn(page, fx, 'reviewer', `/review/selections/${plan.selection_id}`), 200)
    const selectionText = await page.locator('main').innerText()
    assert.match(selectionText, /Created by [^;]*\(5 min ago\); expires [^)]*\(in 25 min\)/)

    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.match(await page.locator('main').innerText(), /\(5 min ago\)[\s\S]*expires [^)]*\(in 25 min\)/)

    await page.goto(`${fx.base}/review`)
    assert.match(await page.getByTestId('queue').innerText(), /25 min/)

    const bob = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
    await fx.gateway.plans.decide(bob, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.match(await page.locator('main').innerText(), /valid until [^)]*\(in 15 min\)/)

    clock.now += 30 * 60_000
    await page.goto(`${fx.base}/review/selections/${plan.selection_id}`)
    assert.match(await page.locator('main').innerText(), /expired [^)]*\(5 min ago\)/)
    await page.context().close()
  })
})
