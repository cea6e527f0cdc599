import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { withFaultGateway } from '../operations/support/fault-gateway.js'
import { userIdOf } from '../operations/support/users-upstream.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * The operation page's live update set the pause reason as the upstream wrote it: a 503's body (quoted in the
 * reason) could carry a right-to-left override or a zero-width space, which the page then showed as nothing or
 * as reordered text, while the page as first rendered revealed them. The live text is now the server's
 * revealed sentence. Real Chromium, a real loopback upstream, a real 3 s pause.
 */
describe('the live operation view shows a pause reason as the page does: revealed', () => {
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  test('a pause that starts after the page loaded: its reason shows the override and the zero-width space as code points, markup as text', () =>
    withFaultGateway('sqlite', 3, { concurrency: 1, batch_size: 1 }, async (ctx) => {
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      ctx.upstream.onWrite = async (t) => {
        // the first write waits until the page is open, so the pause starts while the page polls
        if (t.n === 1) await held
        t.send(...t.apply())
      }
      let armed = false
      const body = { error: 'maint<b id="injected">enance</b> until \u202Enoon\u200B' }
      ctx.upstream.onReadAnswer = (id) => {
        if (!armed || id !== userIdOf(2)) return undefined
        armed = false
        return [503, body, { 'retry-after': '3' }]
      }
      const id = await ctx.commit('live-pause-reason')
      const page = await (await newContext(browser)).newPage()
      await signIn(page, ctx.fx, 'reviewer')
      await page.goto(`${ctx.fx.base}/review/operations/${id}`)
      assert.equal(await page.locator('[data-paused]').isHidden(), true, 'not paused when the page loaded')

      armed = true
      release()
      await page.waitForFunction(() => (document.querySelector('[data-paused]') as HTMLElement | null)?.hidden === false, undefined, { timeout: 10_000 })
      const text = await page.locator('[data-paused-text]').innerText()
      assert.match(text, /No write is sent before \S+\. /)
      assert.match(text, /503/)
      assert.match(text, /until \[U\+202E\]noon\[U\+200B\]/, text)
      assert.ok(!/[\u202E\u200B]/.test(text), `no raw override or zero-width space: ${JSON.stringify(text)}`)
      assert.match(text, /<b id=\\"injected\\">/, 'markup shown as text')
      assert.equal(await page.locator('#injected').count(), 0, 'never as an element')
      await page.context().close()
      assert.equal((await ctx.finished(id)).state, 'succeeded')
    }))
})
