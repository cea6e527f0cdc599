import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser, newContext, screenshot, signIn } from './support.js'

/** A 2,000-character config value: two near-identical ones differ in one character near their end. */
const BODY = `{"policy":"${'retain-7y;'.repeat(190)}`
const AFTER = `${BODY}approved-by-legaI 🇺🇦"}`

/** Each record's status now, and the part of it (and of AFTER) that differs, as the page shows them. */
const LONG = [
  // one letter: l became a capital I
  { id: 'one-letter', status: `${BODY}approved-by-legal 🇺🇦"}`, was: 'l', becomes: 'I' },
  // a Cyrillic е inside a word, shown revealed: its whole code point marked, not a piece of "[U+0435]"
  { id: 'revealed', status: `${BODY}approved-by-l\u0435gaI 🇺🇦"}`, was: '[U+0435]', becomes: 'e' },
  // two flags sharing their first code point (U+1F1FA): the whole flag is marked, never half a grapheme
  { id: 'flag', status: `${BODY}approved-by-legaI 🇺🇸"}`, was: '🇺🇸', becomes: '🇺🇦' },
] as const

/** The change shown in the manifest row of record `id`: each side's whole text and its marked part(s). */
async function changeOf(page: Page, id: string) {
  return page.evaluate((id) => {
    const row = [...document.querySelectorAll('[data-testid=manifest] tbody tr')].find((tr) => tr.querySelector('th')?.textContent === id)
    const change = row?.querySelector('.change')
    if (!change) throw new Error(`no change shown for ${id}`)
    const [was, becomes] = [...change.querySelectorAll('.val')] as HTMLElement[]
    // no named inner function: the page has no __name
    const [wasMarks, becomesMarks] = [was!, becomes!].map((el) => [...el.querySelectorAll('mark')].map((m) => m.textContent))
    return { text: (change as HTMLElement).innerText, was: was!.textContent, becomes: becomes!.textContent, wasMarks, becomesMarks }
  }, id)
}

describe("where a long value changes is marked on both sides of its before → after (Chromium, an odd http upstream)", () => {
  let upstream: OddUpstream
  let fx: GatewayFixture
  let browser: Browser
  let longPlan = ''
  let shortPlan = ''
  before(async () => {
    upstream = await startOddUpstream([...LONG.map((r) => ({ id: r.id, name: 'n', status: r.status, note: 'n' })), { id: 'short', name: 'n', status: 'open', note: 'n' }])
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 20,
      edit: (c) => {
        const things = thingsResourceConfig(upstream.origin) as any
        delete things.actions.set_status.precondition
        c.resources.things = things
      },
    })
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const longOnes = await gw.selections.create(agent, 'things', { filter: { id: { in: LONG.map((r) => r.id) } } })
    assert.equal(longOnes.complete, true)
    longPlan = (await gw.plans.propose(agent, longOnes.selection_id, { action: { type: 'set_status', params: { status: AFTER } } })).plan_id
    const shortOne = await gw.selections.create(agent, 'things', { filter: { id: { in: ['short'] } } })
    shortPlan = (await gw.plans.propose(agent, shortOne.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })).plan_id
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await upstream?.close()
  })

  test('the marked text on each side is exactly the part that differs, and the whole value still reads', async () => {
    const context = await newContext(browser)
    const page = await context.newPage()
    assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${longPlan}`), 200)
    await screenshot(page, 'changed-part-marked')
    const shownAfter = JSON.stringify(AFTER)
    for (const r of LONG) {
      const c = await changeOf(page, r.id)
      const shownBefore = JSON.stringify(r.status.replace('\u0435', '[U+0435]'))
      assert.deepEqual(c.wasMarks, [r.was], `${r.id}: the before side marks ${JSON.stringify(c.wasMarks)}`)
      assert.deepEqual(c.becomesMarks, [r.becomes], `${r.id}: the after side marks ${JSON.stringify(c.becomesMarks)}`)
      // the whole value on both sides, revealed and quoted as before; the screen-reader words are not in the copied text
      assert.ok(c.was === `${shownBefore} (text)`, `${r.id}: the before side reads ${JSON.stringify(c.was.slice(-60))}`)
      assert.ok(c.becomes === `${shownAfter} (text)`, `${r.id}: the after side reads ${JSON.stringify(c.becomes.slice(-60))}`)
      assert.ok(c.text === `status: ${shownBefore} (text)→${shownAfter} (text)`, `${r.id}: the change reads ${JSON.stringify(c.text.slice(-80))}`)
    }
    // said in words to a screen reader (and in forced colours, where a background is not drawn)
    const label = await page.evaluate(() => getComputedStyle(document.querySelector('[data-testid=manifest] mark')!, '::before').content)
    assert.match(label, /changed/)
    // forced colours drop the mark's background: its outline is still drawn
    await page.emulateMedia({ forcedColors: 'active' })
    const outline = await page.evaluate(() => getComputedStyle(document.querySelector('[data-testid=manifest] mark')!).outlineStyle)
    assert.equal(outline, 'solid')
    await context.close()
  })

  test('a short change reads as before: no mark', async () => {
    const context = await newContext(browser)
    const page = await context.newPage()
    assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${shortPlan}`), 200)
    const c = await changeOf(page, 'short')
    assert.equal(c.text, 'status: open→closed')
    assert.deepEqual([c.wasMarks, c.becomesMarks], [[], []])
    await context.close()
  })
})
