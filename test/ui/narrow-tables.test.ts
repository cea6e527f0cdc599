import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { launchBrowser, screenshot, signIn } from './support.js'

/**
 * A phone (375 CSS pixels) and a 1280-pixel screen at 200% zoom (640 CSS pixels, two device pixels each). A phone's
 * scrollbars overlay the content and show only while scrolling: a table cut at its box's edge carries no mark.
 */
const SCREENS = [
  { name: 'phone', width: 375, scale: 1 },
  { name: 'zoom-200', width: 640, scale: 2 },
] as const

describe('the review tables fit the screen: no column is cut at the edge unmarked (Chromium, an odd http upstream)', () => {
  let upstream: OddUpstream
  let fx: GatewayFixture
  let browser: Browser
  let plan = { plan_id: '', selection_id: '' }
  before(async () => {
    upstream = await startOddUpstream(
      Array.from({ length: 6 }, (_, i) => ({ id: `t-${i}`, name: `customer ${i} approved-by-legal`, status: 'open', note: 'https://example.com/a/long/path/that/ends/approved-by-legal' })),
    )
    fx = await startDemoGateway({ store: 'sqlite', count: 20, edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    const gw = fx.gateway
    const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const selection = await gw.selections.create(agent, 'things', { filter: { status: 'open' } })
    assert.equal(selection.complete, true)
    plan = await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await upstream?.close()
  })

  for (const screen of SCREENS)
    test(`on a ${screen.name} (${screen.width} CSS pixels) every table of the plan, selection and queue pages is whole within its box, the Before → after column in view`, async () => {
      const context = await browser.newContext({ viewport: { width: screen.width, height: 812 }, deviceScaleFactor: screen.scale, locale: 'en-US' })
      const page = await context.newPage()
      assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`), 200)
      for (const path of [`/review`, `/review/selections/${plan.selection_id}`, `/review/plans/${plan.plan_id}`]) {
        await page.goto(`${fx.base}${path}`)
        await screenshot(page, `narrow-tables-${screen.name}-${path.split('/')[2] ?? 'queue'}`)
        const cut = await page.evaluate(() =>
          [...document.querySelectorAll('.table-scroll')]
            .filter((box) => box.scrollWidth > box.clientWidth + 1)
            .map((box) => `${box.getAttribute('aria-label')}: ${box.scrollWidth} wide in a box of ${box.clientWidth}`),
        )
        assert.deepEqual(cut, [], `${path}: tables cut at the edge of their box, the columns past it out of sight`)
        // fitting never breaks a count: 13 drawn as a 1 above a 3 reads as two numbers
        const broken = await page.evaluate(() =>
          [...document.querySelectorAll('td.num')]
            .filter((cell) => {
              const range = document.createRange()
              range.selectNodeContents(cell)
              return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1
            })
            .map((cell) => cell.textContent),
        )
        assert.deepEqual(broken, [], `${path}: counts broken across lines`)
        if (path.includes('/plans/')) {
          const heading = await page.getByRole('columnheader', { name: 'Before → after' }).boundingBox()
          assert.ok(heading && heading.x + heading.width <= screen.width, `the Before → after heading is drawn at ${JSON.stringify(heading)}, past the screen's ${screen.width}`)
        }
      }
      await context.close()
    })
})
