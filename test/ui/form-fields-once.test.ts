import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { openReviewSession } from '../support/review-session.js'

/**
 * A review form names each field once (the two decision buttons share a name, but a browser sends only the one
 * clicked). A post naming one twice was read as its last value: `decision=reject&decision=approve` recorded an
 * approval, `plan_digest=<other>&plan_digest=<this>` approved on the digest sent second. Like a /v1 body naming a key
 * twice, it is refused, 400 `invalid_request` naming the field, and nothing is recorded.
 */
describe('review forms: a field given twice is refused, nothing recorded (real HTTP, SQLite store)', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 200 })

  async function pendingPlan() {
    const { fx } = env
    const agent = fx.as('agent')
    const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'eu' } })
    assert.equal(selection.status, 201, JSON.stringify(selection.body))
    const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: `form-fields-${Math.random()}` } } })
    assert.equal(plan.status, 201, JSON.stringify(plan.body))
    return { planId: plan.body.plan_id as string, digest: plan.body.plan_digest as string }
  }

  async function postRaw(path: string, session: Awaited<ReturnType<typeof openReviewSession>>, body: string) {
    const response = await fetch(`${env.fx.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body,
    })
    return { status: response.status, html: await response.text() }
  }

  test('decision given twice (reject, then approve): 400 naming decision, no decision recorded', async () => {
    const { planId, digest } = await pendingPlan()
    const session = await openReviewSession(env.fx.base, env.fx.tokens.reviewer)
    await session.get(`/review/plans/${planId}`)
    const csrf = encodeURIComponent(session.csrf)
    const answer = await postRaw(`/review/plans/${planId}/decision`, session, `csrf=${csrf}&decision=reject&decision=approve&plan_digest=${encodeURIComponent(digest)}`)
    assert.equal(answer.status, 400, answer.html.slice(0, 400))
    assert.match(answer.html, /form field (“|&quot;|")decision(”|&quot;|") is given 2 times/)
    const plan = await env.fx.as('reviewer')('GET', `/v1/plans/${planId}`)
    assert.equal(plan.body.state, 'pending')
    assert.deepEqual(plan.body.approvals, [])
  })

  test('plan_digest given twice: 400 naming it, no approval recorded; sent once the same approval is taken', async () => {
    const { planId, digest } = await pendingPlan()
    const session = await openReviewSession(env.fx.base, env.fx.tokens.reviewer)
    await session.get(`/review/plans/${planId}`)
    const csrf = encodeURIComponent(session.csrf)
    const twice = await postRaw(`/review/plans/${planId}/decision`, session, `csrf=${csrf}&decision=approve&plan_digest=sha256%3Aother&plan_digest=${encodeURIComponent(digest)}`)
    assert.equal(twice.status, 400, twice.html.slice(0, 400))
    assert.match(twice.html, /plan_digest/)
    assert.deepEqual((await env.fx.as('reviewer')('GET', `/v1/plans/${planId}`)).body.approvals, [])
    const once = await postRaw(`/review/plans/${planId}/decision`, session, `csrf=${csrf}&decision=approve&plan_digest=${encodeURIComponent(digest)}`)
    assert.equal(once.status, 303, once.html.slice(0, 400))
    assert.equal((await env.fx.as('reviewer')('GET', `/v1/plans/${planId}`)).body.approvals.length, 1)
  })

  test('a field sent as a list (decision[]) is refused the same way', async () => {
    const { planId, digest } = await pendingPlan()
    const session = await openReviewSession(env.fx.base, env.fx.tokens.reviewer)
    await session.get(`/review/plans/${planId}`)
    const answer = await postRaw(`/review/plans/${planId}/decision`, session, `csrf=${encodeURIComponent(session.csrf)}&decision=approve&comment[]=a&comment[]=b&plan_digest=${encodeURIComponent(digest)}`)
    assert.equal(answer.status, 400, answer.html.slice(0, 400))
    assert.match(answer.html, /comment\[\]/)
    assert.deepEqual((await env.fx.as('reviewer')('GET', `/v1/plans/${planId}`)).body.approvals, [])
  })
  // A JSON (or text/plain) body read as a form has no field at all, and was answered 403 "its CSRF token is missing
  // or wrong", blaming a token the sender had put in the body: the answer names the media type to send.
  test('a decision sent as JSON or text/plain is 400 naming the form media types, nothing recorded', async () => {
    const { planId, digest } = await pendingPlan()
    const session = await openReviewSession(env.fx.base, env.fx.tokens.reviewer)
    await session.get(`/review/plans/${planId}`)
    for (const [type, body] of [
      ['application/json', JSON.stringify({ csrf: session.csrf, decision: 'approve', plan_digest: digest })],
      ['text/plain', `csrf=${session.csrf}\r\ndecision=approve\r\nplan_digest=${digest}`],
    ]) {
      const response = await fetch(`${env.fx.base}/review/plans/${planId}/decision`, { method: 'POST', redirect: 'manual', headers: { 'content-type': type!, cookie: session.cookie }, body })
      const html = await response.text()
      assert.equal(response.status, 400, `${type}: ${html.slice(0, 300)}`)
      assert.match(html, /application\/x-www-form-urlencoded/)
    }
    assert.deepEqual((await env.fx.as('reviewer')('GET', `/v1/plans/${planId}`)).body.approvals, [])
  })
})
