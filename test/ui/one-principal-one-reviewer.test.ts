import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn } from './support.js'

for (const kind of STORE_KINDS) {
  describe(`review pages: two reviewers means two people, whatever tokens they sign in with (${kind} store)`, () => {
    let fx: GatewayFixture
    let browser: Browser
    before(async () => {
      // Every plan needs two distinct reviewers.
      fx = await startDemoGateway({ store: kind, count: 2000, edit: (raw) => void (raw.resources.subscriptions.approval.two_reviewers_above = 0) })
      browser = await launchBrowser()
    })
    after(async () => {
      await browser?.close()
      await fx?.close()
    })

    const approvedBy = async (page: Page) => (await page.getByTestId('approved-by').locator('li').allInnerTexts()).map((t) => t.replace(/^Approved by (\S+) at .*$/s, '$1'))

    test("alice approves on her laptop, then on her phone (a page opened before): one approval, the plan awaits a second person; bob's makes it two", async () => {
      const phoneToken = (await fx.gateway.principals.addToken({ principal: 'alice' })).token
      const selection = await createSelection(fx)
      const plan = await proposePlan(fx, selection.selection_id)
      assert.equal(plan.approval.reviewers_needed, 2)
      const path = `/review/plans/${plan.plan_id}`

      // Both of alice's sessions show the form: neither has approved yet.
      const laptop = await (await newContext(browser)).newPage()
      const phone = await (await newContext(browser, 375)).newPage()
      assert.equal(await signIn(laptop, fx, 'reviewer', path), 200)
      assert.equal(await signIn(phone, fx, { token: phoneToken }, path), 200)
      assert.equal(await phone.getByTestId('approve').count(), 1)

      await Promise.all([laptop.waitForURL(/decided=approve/), laptop.getByTestId('approve').click()])
      assert.equal(await laptop.getByTestId('plan-state').innerText(), 'pending')
      assert.deepEqual(await approvedBy(laptop), ['alice'])

      // The phone's stale form is sent: the server counts alice once.
      await Promise.all([phone.waitForURL(/decided=approve/), phone.getByTestId('approve').click()])
      assert.equal(await phone.getByTestId('plan-state').innerText(), 'pending', 'one person with two tokens is one reviewer')
      assert.deepEqual(await approvedBy(phone), ['alice'], 'each approving person is shown once')
      assert.match(await phone.getByTestId('approvals-needed').innerText(), /1 valid approval of 2 needed: 1 more distinct reviewer still needed/)
      assert.match(await phone.getByTestId('cannot-approve').innerText(), /You have approved this plan; 1 more distinct reviewer must approve it/)
      assert.equal(await phone.getByTestId('approve').count(), 0)
      // The stale click recorded nothing new, and the page says so rather than "Your approval is recorded".
      assert.match(await phone.locator('.notice').first().innerText(), /You had already approved this plan at \S+; nothing new was recorded and it still counts once/)
      const served = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(served.body.state, 'pending')
      assert.equal(served.body.approvals.length, 1, `one approval row, not one per click: ${JSON.stringify(served.body.approvals)}`)

      const bob = await (await newContext(browser)).newPage()
      await signIn(bob, fx, 'reviewer2', path)
      await Promise.all([bob.waitForURL(/decided=approve/), bob.getByTestId('approve').click()])
      assert.equal(await bob.getByTestId('plan-state').innerText(), 'approved')
      assert.deepEqual(await approvedBy(bob), ['alice', 'bob'])
      for (const page of [laptop, phone, bob]) await page.context().close()
    })
  })
}
