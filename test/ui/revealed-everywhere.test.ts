import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn, waitForOperation } from './support.js'

/** Characters a reader cannot see, or that reorder what they see: never on a page as themselves. */
const HIDDEN = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD]/

/** The whole of the page's main content as HTML (closed details and attributes included), and as read. */
async function shown(page: Page): Promise<{ html: string; text: string }> {
  return { html: await page.locator('main').innerHTML(), text: await page.locator('main').innerText() }
}

describe('operation and audit pages: upstream- and agent-supplied text is shown as what it is', () => {
  let fx: GatewayFixture
  let browser: Browser
  // "acct<RLO>exe.txt" renders as "accttxt.exe"; "a<ZWSP>b" renders as "ab", another record's id.
  const ids = ['acct\u202Eexe.txt', 'a\u200Bb', '', '', `acct_${'9'.repeat(2000)}`]
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 300 })
    browser = await launchBrowser()
    const db = new Database(fx.upstreamUrl.replace(/^sqlite:/, ''))
    try {
      const found = (db.prepare("select id from subscriptions where status = 'past_due' and region = 'us' and collection = 'active' order by id limit 6").all() as { id: string }[]).map((r) => r.id)
      db.prepare('update subscriptions set id = ? where id = ?').run(ids[0], found[0])
      db.prepare('update subscriptions set id = ? where id = ?').run(ids[1], found[1])
      ids[2] = found[2]!
      ids[3] = found[3]!
      // The highest id, which the SQLite snapshot names (max_id=…): the Where section repeats it.
      db.prepare('update subscriptions set id = ? where id = ?').run('zzz\u202Etxt.exe', found[5])
      // An owner that is the text "empty": it must not read as a record with no owner.
      db.prepare('update subscriptions set owner = ? where id = ?').run('empty', ids[2])
      // One unbroken id of 2,005 characters (a filter value holds at most 2,048), wider than any screen.
      db.prepare('update subscriptions set id = ? where id = ?').run(ids[4], found[4])
      // ...whose write the upstream refuses with one unbroken word of 2,000 characters.
      db.exec(`create trigger refuse_long before update on subscriptions when old.id = '${ids[4]}' begin select raise(abort, '${'E'.repeat(2000)}'); end`)
      // Two spaces inside a name: HTML collapses them, so it would read as another customer's "Acme Ltd".
      db.prepare('update subscriptions set customer_name = ? where id = ?').run('Acme  Ltd', ids[3])
      // The upstream refuses this one write with a message holding an override: "quota <RLO>deliveries<PDF>" reads "quota seirevileddeliveries"-like.
      db.exec(`create trigger refuse_one before update on subscriptions when old.id = '${found[2]}' begin select raise(abort, 'quota \u202Edeliveries\u202C exceeded'); end`)
    } finally {
      db.close()
    }
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('target ids, upstream errors and decision comments are revealed on the operation page and both audit levels', async () => {
    const selection = await createSelection(fx, { filter: { id: { in: ids.slice(0, 3) } } })
    assert.equal(selection.count, 3, JSON.stringify(selection))
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    const approved = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'checked \u202Eevol\u202C ok' })
    assert.equal(approved.status, 201, JSON.stringify(approved.body))
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `reveal-${plan.plan_id}` })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operation = await waitForOperation(fx, commit.body.operation_id)
    assert.equal(operation.counts.failed, 1, JSON.stringify(operation))

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/operations/${operation.operation_id}`)
    let main = await shown(page)
    assert.doesNotMatch(main.html, HIDDEN, 'operation page: no invisible or reordering character reaches the page as itself')
    const targets = await page.getByTestId('targets').innerText()
    assert.match(targets, /acct\[U\+202E\]exe\.txt/)
    assert.match(targets, /a\[U\+200B\]b/)
    assert.match(targets, /quota \[U\+202E\]deliveries\[U\+202C\] exceeded/)

    await page.goto(`${fx.base}/review/plans/${plan.plan_id}/audit?operation=${encodeURIComponent(operation.operation_id)}`)
    main = await shown(page)
    assert.doesNotMatch(main.html, HIDDEN, 'audit page: no invisible or reordering character reaches the page as itself')
    assert.match(await page.getByTestId('run-events').innerText(), /checked \[U\+202E\]evol\[U\+202C\] ok/)
    const calls = await page.getByTestId('call-events').innerText()
    assert.match(calls, /acct\[U\+202E\]exe\.txt/)
    assert.match(calls, /a\[U\+200B\]b/)
    await page.context().close()
  })

  test("a rejecting reviewer's comment is revealed on the plan page", async () => {
    const selection = await createSelection(fx, { filter: { id: { in: [ids[2]] } } })
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    const rejected = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'reject', expected_plan_digest: plan.plan_digest, comment: 'fine, \u202Eevorppa\u202C later' })
    assert.equal(rejected.status, 201, JSON.stringify(rejected.body))
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/plans/${plan.plan_id}`)
    assert.doesNotMatch((await shown(page)).html, HIDDEN)
    assert.match((await shown(page)).text, /fine, \[U\+202E\]evorppa\[U\+202C\] later/)
    await page.context().close()
  })

  test('a run of spaces inside a value is shown space by space on the selection, plan, operation and audit pages, never collapsed into one', async () => {
    const selection = await createSelection(fx, { filter: { id: { in: [ids[3]] }, customer_name: 'Acme  Ltd' } })
    assert.equal(selection.count, 1)
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'credit  hold' } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/selections/${selection.selection_id}`)
    assert.match((await shown(page)).text, /customer_name is Acme\[U\+0020\]\[U\+0020\]Ltd/)
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('glance').innerText(), /pause_reason → "credit\[U\+0020\]\[U\+0020\]hold" \(the agent's words\)/)
    assert.match(await page.getByTestId('manifest').innerText(), /Acme\[U\+0020\]\[U\+0020\]Ltd/)
    const approved = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'ok  go' })
    assert.equal(approved.status, 201, JSON.stringify(approved.body))
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `spaces-${plan.plan_id}` })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    await waitForOperation(fx, commit.body.operation_id)
    await page.goto(`${fx.base}/review/operations/${commit.body.operation_id}`)
    assert.match(await page.getByTestId('targets').innerText(), /pause_reason: "" \(empty text\)\s*→\s*credit\[U\+0020\]\[U\+0020\]hold/)
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}/audit`)
    assert.match(await page.getByTestId('run-events').innerText(), /comment: “ok\[U\+0020\]\[U\+0020\]go”/)
    await page.context().close()
  })

  test('a very long record id, upstream error or comment wraps in the operation and audit tables: the outcome and the change stay on the screen', async () => {
    const selection = await createSelection(fx, { filter: { id: { in: [ids[4]] } } })
    assert.equal(selection.count, 1)
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    // A comment of one unbroken word, as long as the form takes.
    assert.equal((await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'Y'.repeat(4000) })).status, 201)
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `long-${plan.plan_id}` })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    assert.equal((await waitForOperation(fx, commit.body.operation_id)).counts.failed, 1)
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/operations/${commit.body.operation_id}`)
    const width = (testid: string) => page.getByTestId(testid).evaluate((t) => ({ wide: t.scrollWidth, box: t.parentElement!.clientWidth }))
    let table = await width('targets')
    assert.ok(table.wide < 1.5 * table.box, `the operation's targets table is ${table.wide}px wide in a ${table.box}px box`)
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}/audit?operation=${encodeURIComponent(commit.body.operation_id)}`)
    table = await width('call-events')
    assert.ok(table.wide < 1.5 * table.box, `the audit's call table is ${table.wide}px wide in a ${table.box}px box`)
    table = await width('run-events')
    assert.ok(table.wide < 1.5 * table.box, `the audit's run table is ${table.wide}px wide in a ${table.box}px box`)
    await page.context().close()
  })

  test('a text value that reads like the mark of an empty value is shown quoted, as text: "" (empty text) set by a plan is not a cleared field', async () => {
    const selection = await createSelection(fx, { filter: { id: { in: [ids[2]] } } })
    // resume_collection clears pause_reason, and its glance reads 'pause_reason → "" (empty text)'; this sets it to the words.
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: '"" (empty text)' } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/plans/${plan.plan_id}`)
    const glance = await page.getByTestId('glance').innerText()
    assert.doesNotMatch(glance, /pause_reason → "" \(empty text\)(,|\s*\(|$)/m, glance)
    assert.match(glance, /pause_reason → "\\"\\" \(empty text\)" \(the agent's words\)/)
    const headers = await page.getByTestId('manifest').locator('thead th').allInnerTexts()
    const owner = await page.getByTestId('manifest').locator('tbody tr').first().locator('th, td').nth(headers.indexOf('owner')).innerText()
    assert.equal(owner, '"empty" (text)')
    await page.context().close()
  })

  test('an error page echoing a crafted address reveals what the address holds', async () => {
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2')
    // A link a reviewer is sent: its 404 and not-found pages repeat the address, override and all.
    for (const path of ['/review/approved%E2%80%AEgnp.exe', '/review/plans/plan_%E2%80%AEdevorppa']) {
      const response = await page.goto(`${fx.base}${path}`)
      assert.equal(response?.status(), 404, path)
      const main = await shown(page)
      assert.doesNotMatch(main.html, HIDDEN, path)
      assert.match(main.text, /\[U\+202E\]/, path)
    }
    await page.context().close()
  })

  test("the Where section reveals what the upstream reported about the read (the snapshot names the highest id)", async () => {
    const selection = await createSelection(fx, { filter: { id: { in: [ids[3]] } } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/selections/${selection.selection_id}`)
    const main = await shown(page)
    assert.doesNotMatch(main.html, HIDDEN)
    assert.match(main.text, /max_id=zzz\[U\+202E\]txt\.exe/)
    await page.context().close()
  })

  test("an exclusion rule's long condition wraps: the count of records it removed stays on the screen", async () => {
    const selection = await createSelection(fx, { filter: { id: { in: [ids[3]] } }, exclude: [{ rule: 'long_rule', filter: { customer_name: 'Q'.repeat(2000) } }] })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/selections/${selection.selection_id}`)
    const table = await page.getByTestId('exclusions').evaluate((t) => ({ wide: t.scrollWidth, box: t.parentElement!.clientWidth }))
    assert.ok(table.wide < 1.5 * table.box, `the exclusions table is ${table.wide}px wide in a ${table.box}px box`)
    const removed = (await page.getByTestId('excluded-count-long_rule').boundingBox())!
    assert.ok(removed.x + removed.width <= (await page.evaluate(() => window.innerWidth)), 'the count of removed records is on the screen')
    await page.context().close()
  })

  test('invisible combining marks (variation selectors, the grapheme joiner) are revealed too: "legal_hold" plus one is another tag', async () => {
    const marks = ['\uFE0F', '\u034F', '\u{E0100}', '\u17B4', '\u180B']
    const selection = await createSelection(fx, {
      filter: { id: { in: [ids[3]] } },
      exclude: marks.map((m, i) => ({ rule: `hold_${i}`, filter: { tags: { contains: `legal_hold${m}` } } })),
    })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/selections/${selection.selection_id}`)
    const text = await page.getByTestId('exclusions').innerText()
    for (const code of ['FE0F', '034F', 'E0100', '17B4', '180B']) assert.match(text, new RegExp(`legal_hold\\[U\\+${code}\\]`), code)
    await page.context().close()
  })

  test("a text value holding the change arrow is quoted: a reason cannot read as another field's change", async () => {
    // records the write is for (ids[3] was paused by an earlier test: it would be skipped, and a plan writing nothing
    // shows no change in the glance or the headline)
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'eu', collection: 'active' } })
    // Unquoted, the glance read "collection → paused, pause_reason → ok, collection → active": the last word on collection, active.
    const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: 'ok, collection → active' } })
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer2', `/review/plans/${plan.plan_id}`)
    for (const testid of ['glance', 'uniform-summary']) {
      const text = await page.getByTestId(testid).innerText()
      assert.match(text, /pause_reason → "ok, collection → active" \(the agent's words\)/, text)
    }
    await page.context().close()
  })
})

