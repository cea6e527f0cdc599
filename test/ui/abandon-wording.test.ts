import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

/** The Abandon choice of an incomplete selection says when it expires, in a sentence that agrees with its subject. */
describe('review pages: the Abandon choice says when the selection (and plan) expire, in correct English', () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 200 })

  test('a selection page says "The selection expires"; a plan page says "The selection and this plan expire"', async () => {
    const { fx, browser } = env
    const partial = await createSelection(fx, { filter: { region: 'apac' }, page_size: 10, budget: { max_pages: 1 } })
    assert.equal(partial.complete, false)
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/selections/${partial.selection_id}`)
    const alone = await page.getByTestId('recovery-choices').innerText()
    assert.match(alone, /Do nothing: nothing is written\. The selection expires /)
    const plan = await proposePlan(fx, partial.selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('recovery-choices').innerText(), /The selection and this plan expire /)
    await page.context().close()
  })
})
