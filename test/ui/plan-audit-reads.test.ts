import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { caller } from '../operations/support/flow.js'
import { withFaultGateway } from '../operations/support/fault-gateway.js'
import { STORE_KINDS } from '../support/stores.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * The plan's audit trail lists each kind of run-level row up to 500; every view of an operation (an open operation
 * page polls every 2 s) is a row under its id, so 500 views pushed every later step of it off the trail. Successful
 * reads are now left out of those rows (counted), so a step after them is listed. Real Chromium, a real upstream.
 */
describe("the plan's audit trail leaves successful reads out of its run-level rows", () => {
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  for (const kind of STORE_KINDS)
    test(`${kind}: a step after 520 views of the operation is listed; the views are counted, not listed`, () =>
      withFaultGateway(kind, 3, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        const id = await ctx.commit('plan-audit-reads')
        const op = await ctx.fx.gateway.operations.waitFor(id, 30_000)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
        for (let i = 0; i < 520; i++) assert.equal((await ctx.agent('GET', `/v1/operations/${id}`)).status, 200)
        // a step after the views: a token outside the operation's resource asks for it (a refused request is listed)
        const outsider = caller(ctx.fx.base, (await ctx.fx.gateway.principals.issue({ name: 'orders-agent', role: 'agent', scopes: { resources: ['orders'], actions: '*' } })).token)
        assert.equal((await outsider('GET', `/v1/operations/${id}`)).status, 403)

        const page = await (await newContext(browser)).newPage()
        await signIn(page, ctx.fx, 'reviewer', `/review/plans/${op.plan_id}/audit`)
        const rows = await Promise.all((await page.getByTestId('run-events').locator('tbody tr').all()).map((tr) => tr.innerText()))
        const text = rows.join('\n')
        assert.match(text, /POST \/v1\/resources\/:resource\/bulk-actions/, 'the commit is listed')
        const gets = rows.filter((r) => /GET \/v1\/operations\/:id\b/.test(r))
        assert.equal(gets.length, 1, `of the views, only the refused one is listed: ${gets.length} listed`)
        assert.match(gets[0]!, /refused claim/)
        const said = await page.getByTestId('plan-audit-reads').innerText()
        const left = Number(/([\d,]+) successful reads/.exec(said)?.[1]?.replace(/,/g, ''))
        assert.ok(left >= 520, said)
        assert.match(said, /left out/)
        await page.context().close()
      }))
})
