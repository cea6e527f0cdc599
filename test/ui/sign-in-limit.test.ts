import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * Failed review sign-ins are limited per address like bearer tokens are (src/api/failure-limit.ts), counted apart
 * from them: after 20 refused tokens in a minute the sign-in form answers 429 even for a valid token, until the
 * minute from the first failure ends. The gateway's clock is pinned and moved by the test, never raced.
 */
describe('failed review sign-ins are limited per address, for a minute', () => {
  let fx: GatewayFixture
  let now = Date.parse('2026-03-02T09:00:00.000Z')
  let form: { csrf: string; cookie: string }
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 20, clock: () => new Date(now) })
    // One sign-in form (its CSRF token and cookie) serves every attempt below, as a script replaying it would.
    const page = await fetch(`${fx.base}/review/sign-in`)
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1]
    assert.ok(csrf)
    form = { csrf, cookie: page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ') }
  })
  after(async () => {
    await fx?.close()
  })

  const signIn = async (token: string): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${fx.base}/review/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
      body: new URLSearchParams({ csrf: form.csrf, token }).toString(),
    })
    return { status: res.status, text: await res.text() }
  }
  const failTwenty = async () => {
    for (let i = 0; i < 20; i++) assert.equal((await signIn(`wrt_reviewer_guess_${i}`)).status, 401, `attempt ${i}`)
  }

  test('20 refused tokens: a valid one is 429 until the minute ends (1 ms before: still 429), then signs in; a new window counts afresh', async () => {
    const start = now
    await failTwenty()
    const limited = await signIn(fx.tokens.reviewer)
    assert.equal(limited.status, 429)
    assert.match(limited.text, /Too many failed sign-ins from this address/)
    now = start + 59_999
    assert.equal((await signIn(fx.tokens.reviewer)).status, 429, '1 ms before the window ends the address is still limited')
    now = start + 60_000
    assert.equal((await signIn(fx.tokens.reviewer)).status, 303, 'at the end of the window the limit lifts')
    await failTwenty()
    assert.equal((await signIn(fx.tokens.reviewer)).status, 429, 'twenty failures in the new window limit the address again')
    now = start + 119_999
    assert.equal((await signIn(fx.tokens.reviewer)).status, 429)
    now = start + 120_000
    assert.equal((await signIn(fx.tokens.reviewer)).status, 303)
  })

  test('counted apart from the API: while sign-ins from an address are limited, its bearer tokens still get in', async () => {
    now += 3_600_000
    await failTwenty()
    assert.equal((await signIn(fx.tokens.reviewer)).status, 429)
    const res = await fx.as('agent')('GET', '/v1/resources')
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })
})
