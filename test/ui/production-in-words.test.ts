import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn } from './support.js'

/** The banner's words with the environment's own name taken out: what the page itself says about where the write lands. */
async function bannerWords(page: Page): Promise<{ words: string; border: string; background: string }> {
  const banner = page.getByRole('region', { name: 'Environment' })
  const name = await banner.getByTestId('environment').innerText()
  const style = await banner.evaluate((el) => ({ border: getComputedStyle(el).borderTopColor, background: getComputedStyle(el).backgroundColor }))
  return { words: (await banner.innerText()).replace(name, ''), ...style }
}

describe('production is said in words, not by colour alone (Chromium in forced colours; an odd http upstream)', () => {
  let upstream: OddUpstream
  let fx: GatewayFixture
  let browser: Browser
  let prodPlan = ''
  let otherPlan = ''
  before(async () => {
    upstream = await startOddUpstream()
    // things: environment "things-<b>prod</b>", read as production; the demo's subscriptions: not
    fx = await startDemoGateway({ store: 'sqlite', count: 20, edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const selection = await gw.selections.create(agent, 'things', { filter: { status: 'open' } })
    prodPlan = (await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })).plan_id
    otherPlan = (await proposePlan(fx, (await createSelection(fx)).selection_id)).plan_id
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await upstream?.close()
  })

  test("with the system's forced colours the production banner looks like any other, so its words say production", async () => {
    const page = await (await newContext(browser)).newPage()
    await page.emulateMedia({ forcedColors: 'active' })
    assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${prodPlan}`), 200)
    const prod = await bannerWords(page)
    await page.goto(`${fx.base}/review/plans/${otherPlan}`)
    const other = await bannerWords(page)
    // forced colours replace the red: the two banners are drawn alike
    assert.deepEqual({ border: prod.border, background: prod.background }, { border: other.border, background: other.background })
    assert.match(prod.words, /production/i, `the production banner says, apart from the environment's name: ${JSON.stringify(prod.words)}`)
    assert.doesNotMatch(other.words, /production/i, other.words)

    // the queue marked a production environment by bold alone: it says so in words
    await page.goto(`${fx.base}/review`)
    const prodCell = await page.getByTestId('queue').locator(`tr[data-plan-id="${prodPlan}"] td`).first().innerText()
    const otherCell = await page.getByTestId('queue').locator(`tr[data-plan-id="${otherPlan}"] td`).first().innerText()
    assert.match(prodCell, /\(production\)/, prodCell)
    assert.doesNotMatch(otherCell, /production/i, otherCell)
  })
})
