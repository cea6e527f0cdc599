import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { before, describe, test } from 'node:test'
import { revealed } from '../../src/contract/index.js'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

/**
 * A fullwidth or mathematical digit among ASCII digits reads as the ASCII digit: "10０" as 100, "𝟏00" as 100. The
 * pages marked such forms only in a word holding an ASCII letter ("ｐaused"), so a number written this way in an
 * agent's reason, a record's value or an id passed for the digits it imitates.
 */
describe('review pages: a compatibility form of a digit beside ASCII digits shows as its code point', () => {
  const d = demoGatewayWithBrowser({ store: 'sqlite', count: 300 })
  let id = ''
  before(() => {
    const db = new Database(d.fx.upstreamUrl.replace(/^sqlite:/, ''))
    try {
      id = (db.prepare("select id from subscriptions where status = 'past_due' and region = 'eu' order by id limit 1").get() as { id: string }).id
      db.prepare('update subscriptions set customer_name = ? where id = ?').run('Invoice 10\uFF10', id)
    } finally {
      db.close()
    }
  })

  test('revealed marks them; a word of such digits alone reads as written', () => {
    assert.equal(revealed('10\uFF10'), '10[U+FF10]')
    assert.equal(revealed('sub_\u{1D7CF}23'), 'sub_[U+1D7CF]23')
    assert.equal(revealed('\uFF11\uFF12\uFF13'), '\uFF11\uFF12\uFF13')
  })

  test('in the agent\'s reason and in a record on the plan page', async () => {
    const selection = await createSelection(d.fx, { filter: { status: 'past_due', region: 'eu' } })
    const plan = await proposePlan(d.fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'refund \u{1D7CF}00 EUR first' } })
    const page = await (await newContext(d.browser)).newPage()
    await signIn(page, d.fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('action-params').innerText(), /refund \[U\+1D7CF\]00 EUR first/)
    const row = page.getByTestId('manifest').locator('tbody tr', { hasText: id })
    assert.match(await row.innerText(), /Invoice 10\[U\+FF10\]/)
  })
})
