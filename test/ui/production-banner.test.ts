import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { looksLikeProduction } from '../../src/ui/format.js'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

/**
 * A plan for production must not look like one for staging. Environment names are written every way: with
 * hyphens (billing-prod), underscores (billing_prod, PROD_EU), digits (prod2) and in camelCase (billingProd).
 * Only the hyphenated ones got the production banner: a plan writing to billing_prod looked like a test run.
 */
describe('review pages: a production environment gets the production banner however its name is written', () => {
  test('names that say prod, production, prd or live as a word, whatever separates it, read as production; others do not', () => {
    for (const name of ['billing-prod', 'billing_prod', 'PROD_EU', 'eu_production', 'prod2', 'billingProd', 'Production-1', 'prd_eu', 'live_payments', 'prod'])
      assert.equal(looksLikeProduction(name), true, name)
    for (const name of ['billing-demo', 'billing_staging', 'nonprod', 'product-catalog', 'products', 'delivery', 'reproduce', 'olive', 'dev2'])
      assert.equal(looksLikeProduction(name), false, name)
  })

  describe('on a real gateway whose environment is billing_prod', () => {
    const run = demoGatewayWithBrowser({ store: 'sqlite', count: 200, edit: (c) => void (c.resources.subscriptions.environment.name = 'billing_prod') })

    test('the plan page shows the red production banner and the queue names the environment in bold', async () => {
      const { fx, browser } = run
      const plan = await proposePlan(fx, (await createSelection(fx, { filter: { status: 'past_due', region: 'eu' } })).selection_id, { type: 'pause_collection', params: { reason: 'r' } })
      const page = await (await newContext(browser)).newPage()
      await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
      const banner = page.getByRole('region', { name: 'Environment' })
      assert.match(await banner.innerText(), /billing_prod/)
      // the production banner's colours (--bad, --bad-bg in the stylesheet), not the blue of any other environment
      const style = await banner.evaluate((el) => ({ border: getComputedStyle(el).borderTopColor, background: getComputedStyle(el).backgroundColor }))
      assert.deepEqual(style, { border: 'rgb(164, 22, 26)', background: 'rgb(253, 236, 236)' })
      await page.goto(`${fx.base}/review`)
      const cell = page.getByTestId('queue').locator(`tr[data-plan-id="${plan.plan_id}"] td`).first()
      assert.equal(await cell.locator('strong').innerText(), 'billing_prod (acct 4411, host demo.sqlite (local))')
    })
  })
})
