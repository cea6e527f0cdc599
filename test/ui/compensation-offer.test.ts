import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { itemsMcpWorld } from '../operations/support/items-world.js'
import { launchBrowser, newContext, screenshot, signIn } from './support.js'

/**
 * A compensation writes through the action's own request with each record's before-values, so one of a `DELETE` (it
 * deletes again) or of an action endpoint whose body carries no set field (it sends the same change again) is refused
 * 409. The operation page must not offer the button the service refuses, and must say why; an operation written by a
 * PATCH of its set field keeps the button, and a click proposes the compensation. Real Chromium, a loopback upstream
 * whose writes are a DELETE, action endpoints and a PATCH. (The page was already right: the test was seen to fail
 * with the page's not-restorable branch removed.)
 */
describe('the operation page offers a compensation only where one can be proposed (Chromium)', () => {
  const t = itemsMcpWorld('operation-page', 8)
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  const compensationOf = async (page: Page, operationId: string) => {
    await page.goto(`${t.world.fx.base}/review/operations/${operationId}`)
    return { text: await page.getByTestId('compensation').innerText(), buttons: await page.getByTestId('propose-compensation').count(), why: await page.getByTestId('not-restorable').count() }
  }

  test('DELETE and a body with no set field: no button, the reason said; PATCH: the button, and a click proposes', async () => {
    const removed = await t.ran('remove', ['i1', 'i2'], 'ui-remove')
    const closed = await t.ran('close', ['i3', 'i4'], 'ui-close')
    const patched = await t.ran('patch_closed', ['i5', 'i6'], 'ui-patch')
    const page = await (await newContext(browser)).newPage()
    await signIn(page, t.world.fx, 'reviewer')

    const remove = await compensationOf(page, removed)
    await screenshot(page, 'compensation-offer-delete')
    assert.equal(remove.buttons, 0, remove.text)
    assert.equal(remove.why, 1, remove.text)
    assert.match(remove.text, /No, though the config declares the action reversible: each record is written by DELETE \/items\/\{id\}/, remove.text)
    assert.match(remove.text, /restores no removed record, so none is proposed/, remove.text)

    const close = await compensationOf(page, closed)
    assert.equal(close.buttons, 0, close.text)
    assert.match(close.text, /written by POST \/items\/\{id\}\/close, and a compensation plan would send that same request again without the before-values/, close.text)

    const patch = await compensationOf(page, patched)
    await screenshot(page, 'compensation-offer-patch')
    assert.equal(patch.buttons, 1, patch.text)
    assert.equal(patch.why, 0, patch.text)
    assert.match(patch.text, /restores the before-value of each of the 2 succeeded targets/, patch.text)
    await Promise.all([page.waitForURL(/\/review\/plans\/[^/?]+\?proposed=1/), page.getByTestId('propose-compensation').click()])
    const planId = decodeURIComponent(/\/review\/plans\/([^/?]+)/.exec(page.url())![1]!)
    const plan = (await t.world.fx.as('reviewer')('GET', `/v1/plans/${planId}`)).body
    assert.equal(plan.compensates, patched, JSON.stringify(plan))
    await page.context().close()
  })
})
