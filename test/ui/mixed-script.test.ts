import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { renderPlan } from '../../src/cli/render-selection.js'
import { cellText } from '../../src/cli/table-cell.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn } from './support.js'

/**
 * "аdmin" with a Cyrillic "а" (U+0430) read as "admin" on the review page and in `warrant plan`: a record, an
 * agent's parameter or a reviewer's name could pass for another. A letter of another script inside a word is now
 * shown as its code point; a whole word in Russian or Japanese reads as written.
 */
describe('look-alike letters of another script are marked; ordinary non-Latin text is not', () => {
  let fx: GatewayFixture
  let browser: Browser
  let ids: string[]
  const names = ['\u0430dmin Ltd', 'Москва Trading', '東京タワー株式会社']
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 300, edit: (raw) => void (raw.resources.subscriptions.approval.two_reviewers_above = 0) })
    browser = await launchBrowser()
    const db = new Database(fx.upstreamUrl.replace(/^sqlite:/, ''))
    try {
      ids = (db.prepare("select id from subscriptions where status = 'past_due' and region = 'eu' order by id limit 3").all() as { id: string }[]).map((r) => r.id)
      names.forEach((name, i) => db.prepare('update subscriptions set customer_name = ? where id = ?').run(name, ids[i]))
    } finally {
      db.close()
    }
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('the review page and the CLI plan output mark "аdmin", "раyroll" and a reviewer named "аlice"; "Москва" and "東京タワー" read as written', async () => {
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'eu' } })
    // "раyroll hold": Cyrillic "р" and "а"
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: '\u0440\u0430yroll hold' } })
    // a second reviewer whose name passes for alice's: two approvals would read "alice, alice". Such a name is
    // refused at creation now (principal-name-lookalikes.test.ts); one stored before that check still shows
    const lookalike = await fx.gateway.principals.issue({ name: 'lookalike', role: 'reviewer' })
    await fx.gateway.store.db.updateTable('principals').set({ name: '\u0430lice' }).where('name', '=', 'lookalike').execute()
    for (const token of [fx.tokens.reviewer, lookalike.token]) {
      const res = await fetch(`${fx.base}/v1/plans/${plan.plan_id}/approvals`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve', expected_plan_digest: plan.plan_digest }),
      })
      assert.equal(res.status, 201, await res.text())
    }

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'admin', `/review/plans/${plan.plan_id}`)
    const row = (i: number) => page.getByTestId('manifest').locator('tbody tr', { hasText: ids[i]! }).innerText()
    assert.match(await row(0), /\[U\+0430\]dmin Ltd/)
    assert.match(await row(1), /Москва Trading/)
    assert.match(await row(2), /東京タワー株式会社/)
    assert.match(await page.getByTestId('glance').innerText(), /pause_reason → "\[U\+0440\]\[U\+0430\]yroll hold"/)
    const approvers = await page.getByTestId('approved-by').innerText()
    assert.match(approvers, /Approved by alice at/)
    assert.match(approvers, /Approved by \[U\+0430\]lice at/)
    const main = await page.locator('main').innerText()
    for (const spoof of ['\u0430dmin', '\u0440\u0430yroll', '\u0430lice']) assert.ok(!main.includes(spoof), `"${spoof}" never reaches the page as itself`)
    await page.context().close()

    const cli = renderPlan((await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body)
    assert.match(cli, /reason = "\\u0440\\u0430yroll hold"/, cli)
    assert.match(cli, /approved by \\u0430lice at/, cli)
    assert.match(cli, /approved by alice at/, cli)
    assert.equal(cellText('Москва Trading'), 'Москва Trading')
    assert.equal(cellText('\u0430dmin'), '\\u0430dmin')
  })
})
