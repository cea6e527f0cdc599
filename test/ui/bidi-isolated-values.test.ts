import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser, newContext, screenshot, signIn } from './support.js'

/** A status written in Hebrew before and after: right-to-left letters, no override character anywhere. */
const BEFORE = 'פתוח'
const AFTER = 'סגור'

/**
 * Where, on screen, the text `needle` is drawn inside the element matching `selector` (the first whose text holds
 * it): the left and right of its first and last characters, as the browser laid them out.
 */
async function drawnAt(page: Page, selector: string, needle: string, occurrence = 0): Promise<{ left: number; right: number }> {
  return page.evaluate(
    ({ selector, needle, occurrence }) => {
      const root = [...document.querySelectorAll(selector)].filter((e) => (e.textContent ?? '').includes(needle))[occurrence]
      if (!root) throw new Error(`no ${selector} holds ${needle}`)
      const nodes: Text[] = []
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
      while (walker.nextNode()) nodes.push(walker.currentNode as Text)
      const text = nodes.map((n) => n.data).join('')
      const at = text.indexOf(needle)
      // each character's box, found through the text nodes in order (no named inner function: the page has no __name)
      const rects: DOMRect[] = []
      for (let k = 0; k < needle.length; k++) {
        let offset = at + k
        for (const n of nodes) {
          if (offset < n.data.length) {
            const range = document.createRange()
            range.setStart(n, offset)
            range.setEnd(n, offset + 1)
            rects.push(range.getBoundingClientRect())
            break
          }
          offset -= n.data.length
        }
      }
      return { left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)) }
    },
    { selector, needle, occurrence },
  )
}

describe('a right-to-left value does not reorder the words beside it (Chromium, an odd http upstream)', () => {
  let upstream: OddUpstream
  let fx: GatewayFixture
  let browser: Browser
  let planId = ''
  before(async () => {
    upstream = await startOddUpstream([
      { id: 'heb-1', name: 'n', status: BEFORE, note: 'n' },
      { id: 'lat-1', name: 'n', status: 'open', note: 'n' },
      { id: 'lat-2', name: 'n', status: 'open', note: 'n' },
    ])
    // no precondition: the Hebrew record is written, so the manifest shows its change (a record the precondition
    // skips says "would be skipped" instead of an arrow)
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 20,
      edit: (c) => {
        const things = thingsResourceConfig(upstream.origin) as { actions: { set_status: { precondition?: unknown } } }
        delete things.actions.set_status.precondition
        c.resources.things = things
      },
    })
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const selection = await gw.selections.create(agent, 'things', { filter: { id: { in: ['heb-1', 'lat-1', 'lat-2'] } } })
    assert.equal(selection.complete, true)
    planId = (await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: AFTER } } })).plan_id
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await upstream?.close()
  })

  test("a record's before → after reads in that order, and each listed value's count stays after it", async () => {
    const context = await newContext(browser)
    const page = await context.newPage()
    assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${planId}`), 200)
    await screenshot(page, 'bidi-isolated-values')

    // the manifest: status: פתוח → סגור, the before value left of the arrow, the after value right of it
    const was = await drawnAt(page, '[data-testid=manifest] .change', BEFORE)
    const arrow = await drawnAt(page, '[data-testid=manifest] .change', '→')
    const becomes = await drawnAt(page, '[data-testid=manifest] .change', AFTER)
    assert.ok(was.right <= arrow.left && arrow.right <= becomes.left, `drawn as after ${JSON.stringify(becomes)}, arrow ${JSON.stringify(arrow)}, before ${JSON.stringify(was)}: the change reads backwards`)

    // the effect table lists the values now held with their counts: "open (2), פתוח (1)"; the 1 stays after פתוח
    const held = await drawnAt(page, '[data-testid=effect] td', BEFORE)
    const one = await drawnAt(page, '[data-testid=effect] td', '(1)')
    assert.ok(held.right <= one.left, `the count (1) ${JSON.stringify(one)} is drawn before the value ${JSON.stringify(held)} it counts`)
    await context.close()
  })
})
