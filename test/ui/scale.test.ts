import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

const COUNT = 100_000

describe('review pages on a 100,000-member selection', () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: COUNT })

  test('the plan page renders its first page and the total; later pages are read by cursor, never by loading the set', async () => {
    const { fx, browser } = env
    const selection = await createSelection(fx, { filter: {}, page_size: 10_000 })
    assert.equal(selection.count, COUNT)
    const plan = await proposePlan(fx, selection.selection_id, { type: 'resume_collection', params: {} })
    assert.equal(plan.approval.reviewers_needed, 2, 'above two_reviewers_above: the page must say two are needed')

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('manifest-count').innerText(), /100,000 records/)
    assert.match(await page.getByTestId('page-range').innerText(), /Records 1–50 of 100,000/)
    assert.equal(await page.getByTestId('manifest').locator('tbody tr').count(), 50)
    assert.match(await page.getByTestId('approvals-needed').innerText(), /0 valid approvals of 2 needed: 2 more distinct reviewers still needed/)

    // Page 3 at 500 rows: records 1,001–1,500, by cursor.
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}?limit=500`)
    await Promise.all([page.waitForURL(/m=/), page.getByTestId('next-page').first().click()])
    await Promise.all([page.waitForURL(/m=/), page.getByTestId('next-page').first().click()])
    assert.match(await page.getByTestId('page-range').innerText(), /Records 1,001–1,500 of 100,000/)

    // Two reviewers: after the first approval the page says who approved and that one more is needed.
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    await Promise.all([page.waitForURL(/decided=approve/), page.getByTestId('approve').click()])
    assert.match(await page.getByTestId('approved-by').innerText(), /Approved by alice/)
    assert.match(await page.getByTestId('approvals-needed').innerText(), /1 valid approval of 2 needed: 1 more distinct reviewer still needed/)
    assert.equal(await page.getByTestId('approve').count(), 0, 'the same reviewer cannot count twice')
    assert.equal(await page.getByTestId('plan-state').innerText(), 'pending')
    await page.context().close()
  })
})
