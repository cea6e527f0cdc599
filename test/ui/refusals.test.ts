import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { ARTICLE_SELECTION, PAUSE, createSelection, demoGatewayWithBrowser, launchBrowser, newContext, proposePlan, screenshot, signIn } from './support.js'

const RESUME = { type: 'resume_collection', params: {} }

describe('review pages refuse what the services refuse', () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 3000 })

  test('an incomplete selection: its page gives the reasons in words and codes, what was returned, and the three choices; restricting makes a complete one', async () => {
    const { fx, browser } = env
    const partial = await createSelection(fx, { ...ARTICLE_SELECTION, filter: { region: 'eu' }, page_size: 50, budget: { max_pages: 2 } })
    assert.equal(partial.complete, false)

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/selections/${partial.selection_id}`)
    assert.match(await page.getByTestId('completeness').innerText(), /Incomplete: evidence is missing/)
    assert.match(await page.getByTestId('returned-count').innerText(), new RegExp(`${partial.count} records`))
    const reason = await page.getByTestId('reason-CLIENT_LIMIT_REACHED').innerText()
    assert.match(reason, /CLIENT_LIMIT_REACHED/)
    assert.match(reason, /Warrant's own page or item budget stopped the walk/)
    assert.match(reason, /max_pages = 2/)
    const choices = await page.getByTestId('recovery-choices').innerText()
    assert.match(choices, /Retry with a longer deadline/)
    assert.match(choices, /Restrict to the \d+ returned records/)
    assert.match(choices, /Abandon/)
    assert.equal(await page.getByRole('button', { name: /^Approve/ }).count(), 0)

    await Promise.all([page.waitForURL(/created=1/), page.getByRole('button', { name: 'Restrict to the returned ids' }).click()])
    assert.match(await page.getByTestId('completeness').innerText(), /^Complete/)
    assert.match(await page.getByTestId('manifest-count').innerText(), new RegExp(`${partial.count} records`))
    assert.match(await page.getByTestId('nothing-missing').locator('..').innerText(), new RegExp(`recovers the incomplete selection ${partial.selection_id}`))
    await page.context().close()
  })

  test("a plan on an incomplete selection shows why, offers no Approve button, and a forged approval is refused by the plan service", async () => {
    const { fx, browser } = env
    // An agent proposes on an incomplete selection: the plan is reviewable, never approvable.
    const partial = await createSelection(fx, { filter: { region: 'apac', status: 'paused' }, page_size: 10, budget: { max_pages: 1 } })
    assert.equal(partial.complete, false)
    const plan = await proposePlan(fx, partial.selection_id, RESUME)

    const context = await newContext(browser)
    const page = await context.newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.match(await page.getByTestId('completeness').innerText(), /Incomplete/)
    assert.match(await page.getByTestId('glance').innerText(), /evidence is missing: CLIENT_LIMIT_REACHED/)
    await page.getByTestId('reason-CLIENT_LIMIT_REACHED').waitFor()
    assert.match(await page.getByTestId('recovery-choices').innerText(), /Restrict to the/)
    assert.equal(await page.getByTestId('approve').count(), 0, 'no Approve button while evidence is missing')
    assert.equal(await page.getByTestId('reject').count(), 1, 'it can still be rejected')
    assert.match(await page.getByTestId('cannot-approve').innerText(), /selection_incomplete/)
    await screenshot(page, 'plan-incomplete-1280')

    // Posting the decision anyway (valid session, CSRF and digest) hits the same service refusal as the API.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue()
    const forced = await page.request.post(`${fx.base}/review/plans/${plan.plan_id}/decision`, {
      form: { csrf, plan_digest: plan.plan_digest, decision: 'approve' },
      headers: { origin: fx.base },
    })
    assert.equal(forced.status(), 409)
    assert.match(await forced.text(), /selection_incomplete/)
    assert.equal((await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body.state, 'pending')

    // Restrict to the returned ids, from the plan: a complete selection, the same action proposed on it by this reviewer.
    await Promise.all([page.waitForURL(/proposed=1/), page.getByRole('button', { name: 'Restrict to the returned ids' }).click()])
    assert.match(await page.getByTestId('completeness').innerText(), /^Complete/)
    assert.match(await page.getByTestId('flash').innerText(), /You proposed this plan/)
    assert.equal(await page.getByTestId('approve').count(), 0, 'the proposer cannot approve it')
    await context.close()
  })

  test("a reviewer whose token does not cover the plan's action is offered no decision, and a posted one is refused (403) by the plan service", async () => {
    const { fx, browser } = env
    const selection = await createSelection(fx, { filter: { region: 'us', status: 'past_due' } })
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    const narrow = await fx.gateway.principals.issue({ name: 'resume-only-ui-reviewer', role: 'reviewer', scopes: { resources: ['subscriptions'], actions: ['resume_collection'] } })
    const context = await newContext(browser)
    const page = await context.newPage()
    await signIn(page, fx, { token: narrow.token }, `/review/plans/${plan.plan_id}`)
    assert.equal(await page.getByTestId('approve').count(), 0)
    assert.equal(await page.getByTestId('reject').count(), 0)
    assert.match(await page.getByTestId('cannot-approve').innerText(), /does not include the action "pause_collection"/)

    const csrf = await page.locator('input[name="csrf"]').first().inputValue()
    const forced = await page.request.post(`${fx.base}/review/plans/${plan.plan_id}/decision`, {
      form: { csrf, plan_digest: plan.plan_digest, decision: 'approve' },
      headers: { origin: fx.base },
    })
    assert.equal(forced.status(), 403)
    assert.match(await forced.text(), /action &quot;pause_collection&quot; on &quot;subscriptions&quot; is outside this principal|action "pause_collection" on "subscriptions" is outside this principal/)
    const view = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
    assert.equal(view.body.state, 'pending')
    assert.equal(view.body.approvals.length, 0, 'nothing was recorded')
    await context.close()
  })

  test('a forged form without the CSRF token is refused (403) and changes nothing; so is a form from another site', async () => {
    const { fx, browser } = env
    const selection = await createSelection(fx, { filter: { region: 'us', status: 'paused' } })
    const plan = await proposePlan(fx, selection.selection_id, RESUME)
    const context = await newContext(browser)
    const page = await context.newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)

    // Same origin, the session cookie sent, but no CSRF token.
    const forged = await page.request.post(`${fx.base}/review/plans/${plan.plan_id}/decision`, { form: { plan_digest: plan.plan_digest, decision: 'approve' } })
    assert.equal(forged.status(), 403)
    assert.match(await forged.text(), /CSRF token is missing or wrong/)
    const wrong = await page.request.post(`${fx.base}/review/plans/${plan.plan_id}/decision`, { form: { csrf: 'not-the-token', plan_digest: plan.plan_digest, decision: 'approve' } })
    assert.equal(wrong.status(), 403)
    // The session's own token, but another site's Origin: the origin check refuses it on its own.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue()
    for (const origin of ['http://127.0.0.1:1', 'null']) {
      const crossSite = await page.request.post(`${fx.base}/review/plans/${plan.plan_id}/decision`, { form: { csrf, plan_digest: plan.plan_digest, decision: 'approve' }, headers: { origin } })
      assert.equal(crossSite.status(), 403, origin)
    }

    // Another origin on the same host (SameSite does not separate ports): an auto-submitting form.
    const attacker: Server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html')
      res.end(
        `<form id="f" method="post" action="${fx.base}/review/plans/${plan.plan_id}/decision"><input name="decision" value="approve"><input name="plan_digest" value="${plan.plan_digest}"></form><script>document.getElementById('f').submit()</script>`,
      )
    })
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
    try {
      const response = await Promise.all([
        page.waitForResponse((r) => r.url().includes('/decision')),
        page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`),
      ]).then(([r]) => r)
      assert.equal(response.status(), 403)
    } finally {
      await new Promise<void>((resolve) => attacker.close(() => resolve()))
    }

    const view = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
    assert.equal(view.body.state, 'pending')
    assert.equal(view.body.approvals.length, 0, 'nothing was recorded')
    const audit = await fx.as('reviewer')('GET', '/v1/audit?level=run&limit=1000')
    assert.ok(audit.body.events.filter((e: any) => e.action === 'ui:form_refused').length >= 3, 'refused forms are on the audit trail')
    await context.close()
  })

  test('a sign-in form without its own CSRF token (double submit: the form field and its cookie) is refused (403) and opens no session', async () => {
    const { fx } = env
    const form = await fetch(`${fx.base}/review/sign-in`)
    const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1]
    assert.ok(csrf)
    const cookie = form.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
    const post = (headers: Record<string, string>, fields: Record<string, string>) =>
      fetch(`${fx.base}/review/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ token: fx.tokens.reviewer, ...fields }).toString(),
      })
    for (const [why, refused] of [
      ['no token', await post({ cookie }, {})],
      ['another token', await post({ cookie }, { csrf: `${csrf}x` })],
      ['no cookie', await post({}, { csrf })],
    ] as const) {
      assert.equal(refused.status, 403, why)
      assert.match(await refused.text(), /The sign-in form was not accepted/, why)
      assert.ok(!refused.headers.getSetCookie().some((c) => c.startsWith('warrant_review=')), `${why}: no session cookie`)
    }
    assert.equal((await post({ cookie }, { csrf })).status, 303, 'the same form with its token signs in')
  })

  test('the approve flow works with the keyboard only', async () => {
    const { fx, browser } = env
    const selection = await createSelection(fx, { filter: { region: 'eu', status: 'canceled' } })
    const plan = await proposePlan(fx, selection.selection_id, RESUME)
    const context = await newContext(browser)
    const page = await context.newPage()
    await page.goto(`${fx.base}/review/sign-in?next=${encodeURIComponent(`/review/plans/${plan.plan_id}`)}`)
    // The token field has focus on arrival; type, then Enter submits.
    await page.keyboard.type(fx.tokens.reviewer2)
    await Promise.all([page.waitForURL(`**/review/plans/${plan.plan_id}`), page.keyboard.press('Enter')])

    // Tab through the page until the Approve button has focus, then press Enter.
    let focused = ''
    for (let i = 0; i < 400 && focused !== 'approve'; i++) {
      await page.keyboard.press('Tab')
      focused = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '')
    }
    assert.equal(focused, 'approve', 'the Approve button is reachable with Tab')
    await Promise.all([page.waitForURL(/decided=approve/), page.keyboard.press('Enter')])
    assert.match(await page.getByTestId('flash').innerText(), /Your approval is recorded/)
    assert.equal((await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body.approval_state.approved_by[0].name, 'bob')
    await context.close()
  })
})

describe('review pages: an expired plan cannot be approved, a lapsed approval is said', () => {
  let fx: GatewayFixture
  let browser: Browser
  // The gateway's clock runs with real time plus `skew`: the test moves it past the selection's expiry instead of
  // waiting, so nothing races a short TTL (the review session, idle for far longer than the jump, stays open).
  let skew = 0
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 1000, clock: () => new Date(Date.now() + skew) })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('past the approval\'s expiry (before the selection\'s) the page says the approval expired, with when, and offers Approve again', async () => {
    const selection = await createSelection(fx, { filter: { region: 'eu', status: 'past_due' } })
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    const approved = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    assert.equal(approved.status, 201, JSON.stringify(approved.body))
    const context = await newContext(browser)
    const page = await context.newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.equal(await page.getByTestId('approval-expired').count(), 0, 'a live approval is not called expired')

    const view = (await fx.as('reviewer')('GET', `/v1/plans/${plan.plan_id}`)).body as any
    const lapsedAt = view.approval_state.approved_by[0].expires_at as string
    assert.ok(Date.parse(lapsedAt) < Date.parse(selection.expires_at), 'the approval lapses before the selection')
    // the clock only moves forward in this suite: the next test measures its jump from the selection it makes
    skew = Date.parse(lapsedAt) - Date.now() + 1000
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    const notice = await page.getByTestId('approval-expired').innerText()
    assert.match(notice, /approval lapsed at/)
    assert.match(notice, /approve it again/)
    assert.equal(await page.getByTestId('plan-state').innerText(), 'pending')
    assert.equal(await page.getByTestId('approve').count(), 1, 'the reviewer may approve again')
    await context.close()
  })

  test('the page says the selection expired and offers no Approve button; an approval posted after expiry is refused with 410', async () => {
    const selection = await createSelection(fx, { filter: { region: 'eu', status: 'past_due' } })
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    const context = await newContext(browser)
    const page = await context.newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.equal(await page.getByTestId('approve').count(), 1, 'while the selection lives, the plan can be approved')

    skew = Date.parse(selection.expires_at) - Date.now() + 1000
    // The reviewer clicks Approve on the page loaded before expiry: the plan service refuses it.
    await page.getByTestId('approve').click()
    await page.waitForLoadState()
    assert.match(await page.getByTestId('flash').innerText(), /Your approval was refused; nothing was recorded/)
    assert.match(await page.getByTestId('flash').innerText(), /expired/)
    // Reloaded, the page says why and offers no Approve button.
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.equal(await page.getByTestId('plan-state').innerText(), 'expired')
    assert.equal(await page.getByTestId('approve').count(), 0)
    assert.match(await page.getByTestId('cannot-approve').innerText(), /The selection expired/)
    const view = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
    assert.equal(view.body.state, 'expired')
    assert.equal(view.body.approvals.length, 0)
    await context.close()
  })
})
