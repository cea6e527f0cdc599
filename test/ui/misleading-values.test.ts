import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, demoGatewayWithBrowser, launchBrowser, newContext, proposePlan, signIn } from './support.js'

/** Characters a reviewer cannot see, or that reorder what they see: never on a review page as themselves. */
const HIDDEN = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD]/

describe('review pages: values that would read as something else are shown as what they are', () => {
  let fx: GatewayFixture
  let browser: Browser
  let ids: string[]
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 300 })
    browser = await launchBrowser()
    const db = new Database(fx.upstreamUrl.replace(/^sqlite:/, ''))
    try {
      ids = (db.prepare("select id from subscriptions where status = 'past_due' and region = 'eu' order by id limit 2").all() as { id: string }[]).map((r) => r.id)
      // An upstream value with a right-to-left override: "Acme gnp.exe Ltd" would read as "Acme exe.png Ltd".
      db.prepare('update subscriptions set customer_name = ? where id = ?').run('Acme \u202Egnp.exe\u202C Ltd', ids[0])
      // One unbroken value of 5,000 characters, wider than any screen.
      db.prepare('update subscriptions set customer_name = ? where id = ?').run('W'.repeat(5000), ids[1])
    } finally {
      db.close()
    }
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('a right-to-left override in an action parameter or a record, and a zero-width space in an exclusion rule, are shown as code points', async () => {
    // The rule reads "tags contain legal_hold" but holds a zero-width space: it removes nothing, and the
    // legal-hold records stay in the set while the page seems to say they were set aside.
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'eu' }, exclude: [{ rule: 'legal_hold', filter: { tags: { contains: 'legal_hold\u200B' } } }] })
    assert.equal(selection.exclusions[0].count, 0)
    // "credit hold \u202Ewaiver\u202C review" renders as "credit hold reviaw review".
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'credit hold \u202Ewaiver\u202C review' } })

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const main = await page.locator('main').innerText()
    assert.doesNotMatch(main, HIDDEN, 'no invisible or reordering character reaches the page as itself')
    assert.match(await page.getByTestId('glance').innerText(), /pause_reason → "credit hold \[U\+202E\]waiver\[U\+202C\] review" \(the agent's words\)/)
    assert.match(await page.getByTestId('uniform-summary').innerText(), /credit hold \[U\+202E\]waiver\[U\+202C\] review/)
    assert.match(await page.getByTestId('exclusions').innerText(), /tags contain legal_hold\[U\+200B\]/)
    const row = page.getByTestId('manifest').locator('tbody tr', { hasText: ids[0]! })
    assert.match(await row.innerText(), /Acme \[U\+202E\]gnp\.exe\[U\+202C\] Ltd/)
  })

  test('a very long value, in a record or an action parameter, wraps: what each record receives stays on the screen', async () => {
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'eu' } })
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: `${'R'.repeat(1900)}, then cancel` } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const width = await page.evaluate(() => window.innerWidth)
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= width, 'the page itself does not scroll sideways')
    // The manifest scrolls sideways in its own box (ten columns and the change are wider than a screen), but only
    // a little: unwrapped, the 5,000-character name made it 45,000 pixels wide, the change far out of sight.
    const table = await page.getByTestId('manifest').evaluate((t) => ({ wide: t.scrollWidth, box: t.parentElement!.clientWidth }))
    assert.ok(table.wide < 1.5 * table.box, `the manifest is ${table.wide}px wide in a ${table.box}px box`)
    for (const th of await page.getByTestId('manifest').locator('thead th').all()) assert.ok((await th.boundingBox())!.width < width / 2)
    const glance = await page.getByTestId('glance').boundingBox()
    assert.ok(glance && glance.x + glance.width <= width)
    // text holding ", " reads as a list of values: it is quoted (see textValue in src/ui/format.ts)
    assert.match(await page.getByTestId('glance').innerText(), /then cancel" \(the agent's words\) \(reversible\)/)
  })
})

describe('review pages: the confirmation after a decision tells the plan as it is now', () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 300 })

  test('reloading the page an approval redirected to, after another reviewer rejected the plan, never says it may be committed', async () => {
    const { fx, browser } = env
    const plan = await proposePlan(fx, (await createSelection(fx, { filter: { status: 'past_due', region: 'us' } })).selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    await Promise.all([page.waitForURL(/decided=approve/), page.getByTestId('approve').click()])
    assert.match(await page.getByTestId('flash').innerText(), /The plan is approved: the agent may commit it/)

    const rejected = await fx.as('reviewer2')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'reject', expected_plan_digest: plan.plan_digest })
    assert.equal(rejected.status, 201, JSON.stringify(rejected.body))
    await page.reload()
    assert.equal(await page.getByTestId('plan-state').innerText(), 'rejected')
    const flash = await page.getByTestId('flash').innerText()
    assert.doesNotMatch(flash, /approved: the agent may commit it/)
    assert.match(flash, /rejected/)
  })
})
