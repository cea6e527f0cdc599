import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { before, describe, test } from 'node:test'
import { revealed } from '../../src/contract/index.js'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

const STRUCK = 'n\u0336o\u0336t\u0336 paused'
/** Sixty of one mark on one letter: Chromium draws them as one, so it reads as "Acme" with a single dot. */
const STACKED = `Acme${'\u030D'.repeat(60)}`

/**
 * Combining marks that make text draw as other text: an overlay stroke (U+0336) draws "not paused" with "not"
 * struck out, so it reads as "paused"; a mark repeated on one letter draws once, so sixty hidden characters read
 * as one accent. Neither is changed by normalisation, which is what the pages marked.
 */
describe('review pages: overlay and repeated combining marks show as code points', () => {
  const d = demoGatewayWithBrowser({ store: 'sqlite', count: 300 })
  let ids: string[] = []
  before(() => {
    const db = new Database(d.fx.upstreamUrl.replace(/^sqlite:/, ''))
    try {
      ids = (db.prepare("select id from subscriptions where status = 'past_due' and region = 'eu' order by id limit 2").all() as { id: string }[]).map((r) => r.id)
      db.prepare('update subscriptions set customer_name = ? where id = ?').run(STRUCK, ids[0])
      db.prepare('update subscriptions set customer_name = ? where id = ?').run(STACKED, ids[1])
    } finally {
      db.close()
    }
  })

  test('revealed marks them; one mark per letter, Vietnamese and pointed Hebrew read as written', () => {
    assert.equal(revealed(STRUCK), 'n[U+0336]o[U+0336]t[U+0336] paused')
    assert.equal(revealed(STACKED), `Acme\u030D${'[U+030D]'.repeat(59)}`)
    assert.equal(revealed('x\u20E0'), 'x[U+20E0]')
    for (const text of ['Acme\u030D', 'Vi\u1EC7t Nam', '\u05E9\u05C1\u05B8\u05DC\u05D5\u05B9\u05DD', 'x\u0323\u0301']) {
      const plain = text.normalize('NFC')
      assert.equal(revealed(plain), plain)
    }
  })

  test('in records on the plan page and in the agent\'s reason', async () => {
    const selection = await createSelection(d.fx, { filter: { status: 'past_due', region: 'eu' } })
    const plan = await proposePlan(d.fx, selection.selection_id, { type: 'pause_collection', params: { reason: `credit hold, ${STRUCK}` } })
    const page = await (await newContext(d.browser)).newPage()
    await signIn(page, d.fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('action-params').innerText(), /credit hold, n\[U\+0336\]o\[U\+0336\]t\[U\+0336\] paused/)
    const manifest = page.getByTestId('manifest')
    assert.match(await manifest.locator('tbody tr', { hasText: ids[0]! }).innerText(), /n\[U\+0336\]o\[U\+0336\]t\[U\+0336\] paused/)
    assert.match(await manifest.locator('tbody tr', { hasText: ids[1]! }).innerText(), /Acme\u030D(\[U\+030D\]){59}/)
  })
})
