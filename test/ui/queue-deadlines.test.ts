import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { launchBrowser, newContext, screenshot, signIn } from './support.js'

/**
 * The queue's "Time left" was the selection's expiry alone (30 min), while an approval lasts only the approval TTL
 * (15 min here) and never past the selection: a reviewer read "30 min" as how long their approval would let the
 * agent commit. Each row now names each deadline in words: how long the plan can be reviewed (the selection's
 * expiry, which the plan dies with), how long an approval given now lasts (the TTL, or less where the selection
 * expires first), and when an approval already given lapses.
 */
describe('review queue: the deadlines a reviewer needs, each named', () => {
  const clock = { now: Date.parse('2031-06-01T09:00:00.000Z') }
  let fx: GatewayFixture
  let upstream: OddUpstream
  let browser: Browser
  const plans: Record<'one' | 'two', { plan_id: string; plan_digest: string }> = {} as never

  before(async () => {
    upstream = await startOddUpstream()
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 20,
      clock: () => new Date(clock.now),
      edit: (c) => {
        c.resources.things = thingsResourceConfig(upstream.origin)
        // a resource whose plans need two reviewers: one approval given, the other awaited
        c.resources.things2 = thingsResourceConfig(upstream.origin, { two_reviewers_above: 0 })
      },
    })
    browser = await launchBrowser()
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things', 'things2'], actions: '*' } })).token, 'http')
    const propose = async (resource: string) => {
      const selection = await gw.selections.create(agent, resource, { filter: { status: 'open' } })
      return gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
    }
    plans.one = await propose('things')
    plans.two = await propose('things2')
    clock.now += 5 * 60_000
    const bob = await gw.principals.authenticate(fx.tokens.reviewer2, 'http')
    await gw.plans.decide(bob, plans.two.plan_id, { decision: 'approve', expected_plan_digest: plans.two.plan_digest })
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await upstream?.close()
  })

  const rowText = async (page: import('playwright-core').Page, planId: string) => (await page.locator(`tr[data-plan-id="${planId}"]`).innerText()).replace(/\s+/g, ' ')

  test('reviewable for the selection\'s time left; an approval given now lasts the TTL; one given lapses when it does', async () => {
    const page = await (await newContext(browser)).newPage()
    assert.equal(await signIn(page, fx, 'reviewer', '/review'), 200)
    const one = await rowText(page, plans.one.plan_id)
    assert.match(one, /reviewable for 25 min/, one)
    assert.match(one, /an approval given now lasts 15 min/, one)
    const two = await rowText(page, plans.two.plan_id)
    assert.match(two, /reviewable for 25 min/, two)
    assert.match(two, /an approval given now lasts 15 min/, two)
    // bob's approval, given at +5 min, lapses at +20 min: the second reviewer must come before then
    assert.match(two, /the approval given lapses in 15 min/, two)
    await screenshot(page, 'queue-deadlines')

    // 10 min left on the selection: an approval given now cannot outlast it
    clock.now += 15 * 60_000
    await page.goto(`${fx.base}/review`)
    const late = await rowText(page, plans.one.plan_id)
    assert.match(late, /reviewable for 10 min/, late)
    assert.match(late, /an approval given now lasts 10 min \(until the selection expires\)/, late)
    await page.context().close()
  })
})
