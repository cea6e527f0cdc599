import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { caller } from '../operations/support/flow.js'
import { withFaultGateway } from '../operations/support/fault-gateway.js'
import { STORE_KINDS } from '../support/stores.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * Every GET of an operation (the API's, MCP's get_operation, the page's own view and 2-second status poll) is an
 * audit row under its id, so the operation page's newest 50 rows were the latest reads and the commit, the calls and
 * the halt were pages back. The page now leaves successful reads out by default, in the query (a page is still 50
 * rows when more exist), says exactly how many it left out of the page's span, and links to the listing with them;
 * a refused read is never left out. Real Chromium, a real loopback upstream.
 */
describe('the operation page leaves successful reads out of its audit rows, and says how many', () => {
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  const rowsOf = async (page: Page) =>
    Promise.all((await page.getByTestId('operation-audit').locator('tbody tr').all()).map(async (tr) => await tr.innerText()))

  for (const kind of STORE_KINDS)
  test(`${kind}: the commit and calls on the first page after 60 reads; reads behind a link that paging keeps; a refused read in both`, () =>
    withFaultGateway(kind, 3, { concurrency: 1, batch_size: 10 }, async (ctx) => {
      const id = await ctx.commit('operation-audit-reads')
      const op = await ctx.fx.gateway.operations.waitFor(id, 30_000)
      assert.equal(op.state, 'succeeded', JSON.stringify(op))
      // a token outside the operation's resource asks for it: a refused read, a claim that stays visible
      const outsider = caller(ctx.fx.base, (await ctx.fx.gateway.principals.issue({ name: 'orders-agent', role: 'agent', scopes: { resources: ['orders'], actions: '*' } })).token)
      assert.equal((await outsider('GET', `/v1/operations/${id}`)).status, 403)
      for (let i = 0; i < 60; i++) assert.equal((await ctx.agent('GET', `/v1/operations/${id}`)).status, 200)

      const page = await (await newContext(browser)).newPage()
      await signIn(page, ctx.fx, 'reviewer', `/review/operations/${id}`)
      const rows = await rowsOf(page)
      const acting = rows.join('\n')
      assert.match(acting, /POST \/v1\/resources\/:resource\/bulk-actions/, 'the commit on the first page')
      assert.match(acting, /PATCH \/users\/\{id\}[\s\S]*outcome: written/, 'the upstream calls on the first page')
      const gets = rows.filter((r) => /GET \/v1\/operations\/:id\b/.test(r))
      assert.equal(gets.length, 1, 'of the reads, only the refused one')
      assert.match(gets[0]!, /refused claim/)
      const said = await page.getByTestId('operation-audit-reads').innerText()
      const left = Number(/^([\d,]+) successful reads? /.exec(said)?.[1]?.replace(/,/g, ''))
      assert.equal(left, 60, said)
      assert.match(said, /left out/)
      // exact: the rows listed and the reads left out are every row naming the operation (its page's own view is not
      // one: an HTML page names no id; a finished operation's page does not poll)
      const stored = await ctx.fx.gateway.audit.query({ operation_id: id, limit: 1000 })
      assert.equal(rows.length + left, stored.events.length, said)
      assert.equal(left, stored.events.filter((e) => e.action === 'GET /v1/operations/:id' && !e.refused_claim).length, 'the reads left out are the 60 GETs')

      await Promise.all([page.waitForURL(/audit_reads=1/), page.getByTestId('operation-audit-show-reads').click()])
      const all = await rowsOf(page)
      assert.equal(all.length, 50, 'a full page with the reads')
      assert.ok(all.filter((r) => /GET \/v1\/operations\/:id\b/.test(r)).length >= 45, 'the reads are listed')
      // paging back keeps the reads
      await Promise.all([page.waitForURL(/audit_before=\d+.*audit_reads=1|audit_reads=1.*audit_before=\d+/), page.getByTestId('operation-audit-older').click()])
      const older = (await rowsOf(page)).join('\n')
      assert.match(older, /GET \/v1\/operations\/:id/, 'older reads listed')
      assert.match(older, /refused claim/, 'the refused read is listed with the reads too')

      const bad = await page.goto(`${ctx.fx.base}/review/operations/${id}?audit_reads=yes`)
      assert.equal(bad?.status(), 400)
      assert.match(await page.locator('main').innerText(), /audit_reads/)
      await page.context().close()
    }))
})
