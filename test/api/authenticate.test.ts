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
 * address is refused (429) even with a valid token, while another address is not. Twenty-one requests take far
 * less than the minute's window even on a busy machine, so real time is not raced here.
 */
describe('failed authentications are limited per address', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50 })
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
    assert.ok(limited.body.error.details.retry_after_seconds >= 1 && limited.body.error.details.retry_after_seconds <= 60)
    const other = await getFrom(fx.base, '/v1/resources', '127.0.0.2', fx.tokens.agent)
    assert.equal(other.status, 200, 'the limit is per address')
  })
})
