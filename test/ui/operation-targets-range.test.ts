import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PAUSE, createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn, waitForOperation } from './support.js'

describe("the operation page's targets table says which part of the targets it shows", () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 3000 })

  test('a page of 100 of 605 targets says "100 of 605", never "every target"; a filter that fits on one page says it shows all of them', async () => {
    const { fx, browser } = env
    const selection = await createSelection(fx, { filter: { status: 'past_due' } })
    assert.ok(selection.count > 200, `more than two pages of targets (${selection.count})`)
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    assert.equal((await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })).status, 201)
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `range-${plan.plan_id}` })
    assert.equal(commit.status, 202)
    const op = await waitForOperation(fx, commit.body.operation_id)
    const total = op.target_count as number
    const skipped = op.counts.skipped as number
    assert.ok(skipped > 0 && skipped < 100, `some targets were skipped, fewer than a page (${skipped})`)

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/operations/${op.operation_id}`)
    const caption = () => page.getByTestId('targets').locator('caption').innerText()
    const n = (x: number) => x.toLocaleString('en-US')

    // Was: "Every target, in manifest order" over the first 100 rows.
    assert.equal(await page.getByTestId('targets').locator('tbody tr').count(), 100)
    assert.doesNotMatch(await caption(), /every/i)
    assert.match(await caption(), new RegExp(`^Targets 1–100 of ${n(total)}, in manifest order; more on the next page`))
    assert.match(await page.getByTestId('targets-range').innerText(), new RegExp(`^Targets 1–100 of ${n(total)}$`))

    await Promise.all([page.waitForURL(/cursor=/), page.getByRole('link', { name: 'Next page' }).first().click()])
    assert.match(await caption(), new RegExp(`^Targets 101–200 of ${n(total)}, in manifest order; more on the next page`))

    await page.goto(`${fx.base}/review/operations/${op.operation_id}?outcome=skipped`)
    assert.equal(await page.getByTestId('targets').locator('tbody tr').count(), skipped)
    assert.match(await caption(), new RegExp(`^All ${n(skipped)} targets that ended skipped, in manifest order$`))
    await page.context().close()
  })
})
