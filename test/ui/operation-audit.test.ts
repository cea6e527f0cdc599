import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { withFaultGateway } from '../operations/support/fault-gateway.js'
import { userIdOf } from '../operations/support/users-upstream.js'
import { STORE_KINDS } from '../support/stores.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * The operation page had no audit listing: a reviewer saw from it neither the commit, the upstream calls and writes
 * nor the halt, only a link to the plan's whole trail. It now lists the operation's own audit rows, newest first, 50
 * at a time with "Older rows" to go back, saying they are listed as stored (not verified) and marking a refused
 * request's claim; every value is text, never markup. Real Chromium, a real loopback upstream answering 429 (waited
 * out) and then a Retry-After past the bound (a halt).
 */
describe("the operation page lists the operation's audit rows", () => {
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  /** The listed rows: seq, and the row's text. */
  const rowsOf = async (page: Page) =>
    Promise.all(
      (await page.getByTestId('operation-audit').locator('tbody tr').all()).map(async (tr) => ({
        seq: Number((await tr.locator('td').first().innerText()).replace(/,/g, '')),
        text: await tr.innerText(),
      })),
    )

  for (const kind of STORE_KINDS)
  test(`${kind}: newest first, bounded, with older rows behind a link; not verified; a refused claim marked; markup shown as text`, () =>
    withFaultGateway(kind, 3, { concurrency: 1, batch_size: 10, max_retry_after_seconds: 5 }, async (ctx) => {
      ctx.upstream.onWrite = (t) => {
        if (t.id === userIdOf(1) && (ctx.upstream.writes.get(t.id) ?? 0) === 1) return t.send(429, { error: 'slow down' }, { 'retry-after': '1' })
        if (t.id === userIdOf(2)) return t.send(429, { error: 'come back tomorrow' }, { 'retry-after': '100' })
        t.send(...t.apply())
      }
      const id = await ctx.commit('operation-audit')
      // waited in-process: polling over HTTP would add a row per poll
      const op = await ctx.fx.gateway.operations.waitFor(id, 30_000)
      assert.equal(op.state, 'halted', JSON.stringify(op))
      // a refused request naming the operation, its body holding markup
      const refused = await ctx.agent('POST', `/v1/operations/${id}/compensation`, { '<img id="injected" src=x>': 1 })
      assert.equal(refused.status, 400, JSON.stringify(refused.body))
      // more rows than one page holds: reads of the operation are its audit rows too
      for (let i = 0; i < 55; i++) assert.equal((await ctx.agent('GET', `/v1/operations/${id}`)).status, 200)

      const page = await (await newContext(browser)).newPage()
      // with the reads (by default they are left out: operation-audit-reads.test.ts)
      await signIn(page, ctx.fx, 'reviewer', `/review/operations/${id}?audit_reads=1`)
      assert.match(await page.getByTestId('operation-audit-unverified').innerText(), /Listed as stored, not verified\.[\s\S]*warrant audit verify/)
      const newest = await rowsOf(page)
      assert.equal(newest.length, 50, 'one page: the newest 50')
      assert.deepEqual(
        newest.map((r) => r.seq),
        [...newest.map((r) => r.seq)].sort((a, b) => b - a),
        'newest first',
      )
      assert.ok(newest.every((r) => /GET \/v1\/operations\/:id\b/.test(r.text)), 'the newest rows are the latest reads')
      assert.match(await page.getByTestId('operation-audit-range').innerText(), /^The newest 50 rows, seq [\d,]+ back to [\d,]+; older rows on the next page\.$/)

      await Promise.all([page.waitForURL(/audit_before=\d+&audit_reads=1/), page.getByTestId('operation-audit-older').click()])
      const older = await rowsOf(page)
      assert.ok(older.length > 0 && older.every((r) => r.seq < newest[newest.length - 1]!.seq), 'older rows continue below the first page')
      assert.match(await page.getByTestId('operation-audit-range').innerText(), /^Older: [\d,]+ rows, .*back to its first row\.$/)
      assert.equal(await page.getByRole('link', { name: 'Newest rows' }).count(), 1)
      const all = older.map((r) => r.text).join('\n')
      assert.match(all, /POST \/v1\/resources\/:resource\/bulk-actions/, 'the commit')
      assert.match(all, /PATCH \/users\/\{id\}[\s\S]*outcome: rate_limited/, 'the upstream call answered 429')
      assert.match(all, /operation\.halted[\s\S]*halted: retry_after_too_long/, 'the halt')
      assert.ok(older.some((r) => r.text.includes(userIdOf(2)) && /PATCH/.test(r.text)), 'a write names its record')
      const claim = older.find((r) => /refused claim/.test(r.text))
      assert.ok(claim, 'the refused request is marked a refused claim')
      assert.match(claim.text, /POST \/v1\/operations\/:id\/compensation/)
      assert.equal(older.filter((r) => /refused claim/.test(r.text)).length, 1, 'only the refused row is marked')
      // the body it sent, as text
      await page.getByTestId('operation-audit').locator('tr', { hasText: 'refused claim' }).locator('summary').click()
      assert.match(await page.getByTestId('operation-audit').locator('tr', { hasText: 'refused claim' }).innerText(), /<img id=\\"injected\\" src=x>/)
      assert.equal(await page.locator('#injected').count(), 0, 'never an element')

      const bad = await page.goto(`${ctx.fx.base}/review/operations/${id}?audit_before=12x`)
      assert.equal(bad?.status(), 400)
      assert.match(await page.locator('main').innerText(), /audit_before must be a row's seq/)
      await page.context().close()
    }))
})
