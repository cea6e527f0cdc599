import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/** GET over real HTTP from a chosen loopback source address (Linux routes all of 127/8 to lo). */
function getFrom(base: string, path: string, localAddress: string, token: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'GET', localAddress, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }))
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * Failed authentications are limited per client address, across /v1 and /mcp: after 20 failures in a minute the
 * address is refused (429) even with a valid token, while another address is not. The gateway's clock is pinned
 * (it only moves when a test moves it), so the minute's window is the clock's, never raced against real time.
 */
describe('failed authentications are limited per address', () => {
  let fx: GatewayFixture
  let now = Date.parse('2026-03-02T09:00:00.000Z')
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50, clock: () => new Date(now) })
  })
  after(async () => {
    await fx?.close()
  })

  test('20 failures from one address: the 21st request from it is 429 even with a valid token; another address still gets in', async () => {
    for (let i = 0; i < 20; i++) {
      const path = i % 2 === 0 ? '/v1/resources' : '/mcp'
      const failed = await getFrom(fx.base, path, '127.0.0.1', `wrt_agent_guess_${i}`)
      assert.equal(failed.status, 401, `attempt ${i} on ${path}: ${JSON.stringify(failed.body)}`)
    }
    const limited = await getFrom(fx.base, '/v1/resources', '127.0.0.1', fx.tokens.agent)
    assert.equal(limited.status, 429, JSON.stringify(limited.body))
    assert.equal(limited.body.error.code, 'rate_limited')
    assert.match(limited.body.error.message, /too many failed authentications from this address/, 'the refusal says why')
    assert.ok(limited.body.error.details.retry_after_seconds >= 1 && limited.body.error.details.retry_after_seconds <= 60)
    const other = await getFrom(fx.base, '/v1/resources', '127.0.0.2', fx.tokens.agent)
    assert.equal(other.status, 200, 'the limit is per address')
  })

  const failTwenty = async (address: string) => {
    for (let i = 0; i < 20; i++) {
      const failed = await getFrom(fx.base, i % 2 === 0 ? '/v1/resources' : '/mcp', address, `wrt_agent_guess_${i}`)
      assert.equal(failed.status, 401, JSON.stringify(failed.body))
    }
  }

  test('the window is a minute from the first failure: limited 1 ms before its end, lifted at its end; a new window then counts afresh', async () => {
    const address = '127.0.0.3'
    const start = now
    await failTwenty(address)
    const atOnce = await getFrom(fx.base, '/v1/resources', address, fx.tokens.agent)
    assert.equal(atOnce.status, 429, JSON.stringify(atOnce.body))
    assert.equal(atOnce.body.error.details.retry_after_seconds, 60, 'the whole minute is left')
    now = start + 59_999
    const inside = await getFrom(fx.base, '/v1/resources', address, fx.tokens.agent)
    assert.equal(inside.status, 429, `1 ms before the window ends the address is still limited: ${JSON.stringify(inside.body)}`)
    assert.equal(inside.body.error.details.retry_after_seconds, 1)
    now = start + 60_000
    const lifted = await getFrom(fx.base, '/v1/resources', address, fx.tokens.agent)
    assert.equal(lifted.status, 200, `at the end of the window the limit lifts: ${JSON.stringify(lifted.body)}`)
    // Failures after the window open a new one, counted from one: twenty more are limited again, for a full minute.
    await failTwenty(address)
    const again = await getFrom(fx.base, '/v1/resources', address, fx.tokens.agent)
    assert.equal(again.status, 429, `twenty failures in the new window limit the address again: ${JSON.stringify(again.body)}`)
    assert.equal(again.body.error.details.retry_after_seconds, 60)
    now = start + 119_999
    assert.equal((await getFrom(fx.base, '/v1/resources', address, fx.tokens.agent)).status, 429)
    now = start + 120_000
    assert.equal((await getFrom(fx.base, '/v1/resources', address, fx.tokens.agent)).status, 200)
  })
})
