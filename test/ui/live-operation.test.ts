import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { PAUSE, createSelection, launchBrowser, newContext, proposePlan, signIn, waitForOperation } from './support.js'

describe('the operation page while an operation runs', () => {
  let fx: GatewayFixture
  let browser: Browser
  before(async () => {
    // Four writes a second, so the operation runs for a few seconds.
    fx = await startDemoGateway({ store: 'sqlite', count: 1000, edit: (raw) => (raw.execution = { max_writes_per_second: 4, batch_size: 2, concurrency: 1 }) })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('the counts update every 2 seconds without a reload, and the page shows the final outcome when it ends', async () => {
    const broad = await createSelection(fx, { filter: { status: 'past_due', collection: 'active' } })
    const ids = broad.records.slice(0, 16).map((r: any) => r.id)
    assert.equal(ids.length, 16)
    const selection = await createSelection(fx, { filter: { id: { in: ids } } })
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    assert.equal((await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })).status, 201)

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2')
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `live-${plan.plan_id}` })
    assert.equal(commit.status, 202)
    await page.goto(`${fx.base}/review/operations/${commit.body.operation_id}`)
    let navigations = 0
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1
    })
    assert.match(await page.getByTestId('operation-state').innerText(), /^(pending|running)$/)
    const first = Number((await page.getByTestId('count-succeeded').innerText()).replace(/,/g, ''))
    assert.ok(first < 16, `loaded while running (${first} succeeded so far)`)

    const linkCount = async (k: string) => Number(/\(([\d,]+)\)/.exec(await page.getByTestId(`filter-${k}`).innerText())![1]!.replace(/,/g, ''))

    // The script refreshes the counts in place, the cards and the per-outcome filter links alike.
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="count-succeeded"]')?.textContent?.replace(/,/g, '')) > n, first, { timeout: 10_000 })
    assert.equal(navigations, 0, 'updated without a reload')
    // Read together, in one turn of the page's event loop, so a refresh cannot fall between them.
    const [card, link] = await page.evaluate(() =>
      ['[data-testid="count-succeeded"]', '[data-testid="filter-succeeded"]'].map((q) => Number(/[\d,]+(?=\)?$)/.exec(document.querySelector(q)!.textContent!.trim())![0].replace(/,/g, ''))),
    )
    assert.ok(card! > first)
    assert.equal(link, card, 'the filter link counts what the card counts')
    assert.match(await page.locator('#live-status').innerText(), /Updated|reloading/)

    const final = await waitForOperation(fx, commit.body.operation_id)
    await page.waitForFunction((expected) => document.querySelector('[data-testid="operation-state"]')?.textContent === expected && document.querySelector('[data-live-operation]')?.getAttribute('data-finished') === 'true', final.state, { timeout: 15_000 })
    assert.equal(await page.getByTestId('count-succeeded').innerText(), String(final.counts.succeeded))
    assert.equal(await page.getByTestId('count-pending').innerText(), '0')
    for (const k of ['succeeded', 'failed', 'skipped', 'unknown', 'pending'] as const) assert.equal(await linkCount(k), final.counts[k], `filter link ${k}`)
    assert.equal(await page.getByTestId('targets').locator('tbody tr').count(), 16)
    await page.context().close()
  })
})
