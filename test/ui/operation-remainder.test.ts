import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { allResults, selectProposeApprove, waitForOperation, type Caller } from '../operations/support/flow.js'
import { userIdOf } from '../operations/support/users-upstream.js'
import { withUsersGateway } from '../operations/support/users-gateway.js'
import { call } from '../support/gateway-fixture.js'
import { launchBrowser, newContext, screenshot, signIn } from './support.js'

const action = { type: 'set_role', role: 'viewer' }

/** Commits an approved set_role over every active user; answers the operation id (not waited for). */
async function commitAll(agent: Caller, reviewer: Caller, key: string): Promise<string> {
  const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
  const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  return commit.body.operation_id
}

/** The page's CSRF token (every signed-in page has the sign-out form). */
const csrfOf = async (page: Page) => page.locator('input[name="csrf"]').first().inputValue()

/** Posts the page's "propose the rest" form as the signed-in reviewer (same cookies, no Origin), reading the answer. */
async function postRemainder(page: Page, base: string, operationId: string): Promise<{ status: number; text: string; url: string }> {
  await page.goto(`${base}/review/operations/${operationId}`)
  const response = await page.request.post(`${base}/review/operations/${operationId}/remainder`, { form: { csrf: await csrfOf(page) }, maxRedirects: 0 })
  return { status: response.status(), text: await response.text(), url: response.headers().location ?? '' }
}

/**
 * "Propose the rest" was on the API, the CLI and MCP only: a reviewer on a halted operation's page saw its pending
 * targets and no way to finish them. The page now offers it when the operation halted with targets never sent, as
 * it offers compensation: the same service call, the same CSRF, origin and session checks, audited as
 * `ui:propose_remainder` (success and refusal), a refusal shown as a notice with its status. Real Chromium, a real
 * loopback upstream (watched fail before the feature: no such button, the POST a 404 page).
 */
describe('the operation page proposes the rest of a halted operation', () => {
  let browser: Browser
  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  test('offered only for a halted operation with pending targets; a click proposes exactly them, again the same plan; refusals shown; audited', () =>
    withUsersGateway('sqlite', 12, { concurrency: 1, batch_size: 10, halt_after_consecutive_errors: 1, reconcile_settle_seconds: 0 }, async ({ fx, upstream, agent, reviewer }) => {
      const page = await (await newContext(browser)).newPage()
      await signIn(page, fx, 'reviewer')
      const opPage = async (id: string) => {
        await page.goto(`${fx.base}/review/operations/${id}`)
        return page
      }

      // running: no button; a post (a page loaded earlier) is refused with the service's 409, shown as a notice
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      let reset = true
      upstream.onWrite = (_id, n) => (n === 1 ? { hold: held } : n === 3 && reset ? { reset: true } : undefined)
      const id = await commitAll(agent, reviewer, 'ui-rest-unknown')
      await opPage(id)
      assert.equal(await page.getByTestId('propose-remainder').count(), 0, 'not while it runs')
      const running = await postRemainder(page, fx.base, id)
      assert.equal(running.status, 409, running.text)
      assert.match(running.text, /The rest was not proposed/)
      assert.match(running.text, /still (pending|running)/)
      release()

      // halted with a target unknown: no button; the page and a post both say to reconcile first
      const halted = await waitForOperation(agent, id)
      assert.equal(halted.state, 'halted', JSON.stringify(halted))
      assert.equal(halted.counts.unknown, 1, JSON.stringify(halted.counts))
      assert.ok(halted.counts.pending > 0)
      await opPage(id)
      assert.equal(await page.getByTestId('propose-remainder').count(), 0, 'not while a target is unknown')
      assert.match(await page.getByTestId('remainder').innerText(), /reconcile/)
      const unknown = await postRemainder(page, fx.base, id)
      assert.equal(unknown.status, 409, unknown.text)
      assert.match(unknown.text, /The rest was not proposed/)
      assert.match(unknown.text, /reconcile them first/)

      // reconciled: the button, naming how many and that it needs a new approval; a click proposes exactly the pending targets
      assert.equal((await agent('POST', `/v1/operations/${id}/reconcile`)).status, 200)
      const pending = (await allResults(agent, id, 'pending')).map((r) => r.id)
      assert.ok(pending.length > 0 && !pending.includes(userIdOf(1)) && !pending.includes(userIdOf(3)))
      await opPage(id)
      const offer = await page.getByTestId('remainder').innerText()
      assert.match(offer, new RegExp(`${pending.length} pending targets`))
      assert.match(offer, /new approval/)
      await screenshot(page, 'operation-remainder-1280')
      await Promise.all([page.waitForURL(/\/review\/plans\/[^/?]+\?proposed=1/), page.getByTestId('propose-remainder').click()])
      const planId = decodeURIComponent(/\/review\/plans\/([^/?]+)/.exec(page.url())![1]!)
      assert.match(await page.getByTestId('flash').innerText(), /You proposed this plan/)
      assert.equal(await page.getByTestId('approve').count(), 0, 'the proposer cannot approve it')
      const plan = (await reviewer('GET', `/v1/plans/${planId}`)).body
      assert.equal(plan.state, 'pending', 'the old approval never counts')
      assert.equal(plan.target_count, pending.length)
      const selection = await reviewer('GET', `/v1/selections/${plan.selection_id}`)
      assert.equal(selection.body.remainder_of, id)
      const members = await reviewer('GET', `/v1/selections/${plan.selection_id}/records?limit=100`)
      assert.deepEqual(members.body.records.map((m: any) => m.id), pending)

      // proposed: the page names the plan and its state, links to it, and no longer offers the button
      await opPage(id)
      assert.equal(await page.getByTestId('propose-remainder').count(), 0, 'no second proposal offered')
      const proposedRest = page.getByTestId('remainder-plan')
      assert.match(await page.getByTestId('remainder').innerText(), new RegExp(`The rest is proposed: plan ${planId} \\(pending\\)`))
      assert.equal(await proposedRest.getAttribute('href'), `/review/plans/${encodeURIComponent(planId)}`)
      // asked again (a page loaded before, or the API): the same plan, no second one
      const again = await postRemainder(page, fx.base, id)
      assert.equal(again.status, 303, again.text)
      assert.equal(decodeURIComponent(/\/review\/plans\/([^/?]+)/.exec(again.url)![1]!), planId)

      // its compensation, once proposed, is named the same way: a link to the plan instead of the button
      assert.equal(await page.getByTestId('propose-compensation').count(), 1)
      const undo = await agent('POST', `/v1/operations/${id}/compensation`)
      assert.equal(undo.status, 201, JSON.stringify(undo.body))
      await opPage(id)
      assert.equal(await page.getByTestId('propose-compensation').count(), 0, 'no second compensation offered')
      assert.match(await page.getByTestId('compensation').innerText(), new RegExp(`The compensation is proposed: plan ${undo.body.plan_id} \\(pending\\)`))
      assert.equal(await page.getByTestId('compensation-plan').getAttribute('href'), `/review/plans/${encodeURIComponent(undo.body.plan_id)}`)

      // the same protections as the compensation form: no CSRF token, another site, no session
      const cookie = (await page.context().cookies()).find((c) => c.name === 'warrant_review')!
      const form = (body: string, headers: Record<string, string> = {}) =>
        call(fx.base, 'POST', `/review/operations/${id}/remainder`, body, { 'content-type': 'application/x-www-form-urlencoded', cookie: `warrant_review=${cookie.value}`, ...headers })
      assert.equal((await form('')).status, 403, 'no CSRF token')
      assert.equal((await form(`csrf=${encodeURIComponent(await csrfOf(page))}`, { origin: 'https://evil.example' })).status, 403, 'another site')
      assert.equal((await call(fx.base, 'POST', `/review/operations/${id}/remainder`, 'csrf=x', { 'content-type': 'application/x-www-form-urlencoded' })).status, 401, 'no session')

      // nothing left: a finished operation with no pending target offers nothing, and a post is refused
      reset = false
      const done = await waitForOperation(agent, await commitAll(agent, reviewer, 'ui-rest-all'))
      assert.equal(done.counts.pending, 0, JSON.stringify(done))
      await opPage(done.operation_id)
      assert.equal(await page.getByTestId('propose-remainder').count(), 0)
      const nothing = await postRemainder(page, fx.base, done.operation_id)
      assert.equal(nothing.status, 409, nothing.text)
      assert.match(nothing.text, /nothing left/)

      // audited as compensation's is: one ui row per post, success (201, then 200) and refusal alike
      const rows = await fx.gateway.store.db.selectFrom('audit_events').select(['action', 'surface', 'operation_id', 'plan_id', 'summary']).where('action', '=', 'ui:propose_remainder').orderBy('seq').execute()
      assert.deepEqual(
        rows.map((r) => {
          const s = JSON.parse(r.summary as string)
          return [r.surface, r.operation_id, r.plan_id, s.status, s.error ?? s.target_count]
        }),
        [
          ['ui', id, null, 409, 'conflict'],
          ['ui', id, null, 409, 'conflict'],
          ['ui', id, planId, 201, pending.length],
          ['ui', id, planId, 200, pending.length],
          ['ui', done.operation_id, null, 409, 'conflict'],
        ],
      )
      await page.context().close()
    }))
})
