import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayWithBrowser, newContext, signIn } from './support.js'

describe('the header of every review page names the signed-in reviewer as the pages name anyone', () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 200 })

  test('a name with a look-alike letter or a right-to-left override (stored before names were checked) shows its code points in "Signed in as"', async () => {
    const { fx, browser } = env
    // Refused at creation now; names stored before that check are still signed in with.
    const cases = [
      { stored: '\u0430lice', shown: '[U+0430]lice' },
      { stored: 'eve\u202Eecila', shown: 'eve[U+202E]ecila' },
    ]
    for (const [i, c] of cases.entries()) {
      const issued = await fx.gateway.principals.issue({ name: `legacy-${i}`, role: 'reviewer' })
      await fx.gateway.store.db.updateTable('principals').set({ name: c.stored }).where('name', '=', `legacy-${i}`).execute()
      const page = await (await newContext(browser)).newPage()
      assert.equal(await signIn(page, fx, { token: issued.token }), 200)
      const header = await page.locator('header.site').innerText()
      // Was: the name as stored, "Signed in as аlice" reading as alice, and the override reversing "ecila".
      assert.match(header, new RegExp(`Signed in as ${c.shown.replace(/[[\]+]/g, '\\$&')} \\(reviewer\\)`))
      assert.ok(!header.includes(c.stored), 'the stored form is not drawn as it is')
      await page.context().close()
    }
  })
})
