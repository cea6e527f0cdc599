import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

/** A request whose headers are sent as listed, a name given twice included (fetch would join them). */
function send(base: string, method: string, path: string, headers: Record<string, string | string[]>, body?: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, headers: res.headers }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

// Two Authorization headers reached the gateway joined as one value (`Bearer a, Bearer b`), which no token matches:
// 401 "a bearer token is required (Authorization: Bearer <token>)", to a client that had sent two, counted as a
// failed guess. Now 400 invalid_request naming the header and how often it came, on /v1 and /mcp.
describe('an Authorization header given twice is refused naming it', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('/v1 and /mcp, the good token first or second', async () => {
    const { base, tokens } = env.fx
    for (const pair of [
      [`Bearer ${tokens.agent}`, 'Bearer wrt_agent_other'],
      ['Bearer wrt_agent_other', `Bearer ${tokens.agent}`],
    ]) {
      const headers = { authorization: pair }
      const v1 = await send(base, 'GET', '/v1/resources', headers)
      assert.equal(v1.status, 400, JSON.stringify(v1.body))
      assert.equal(v1.body.error.code, 'invalid_request')
      assert.match(v1.body.error.message, /^the Authorization header is given 2 times; send one/)
      const mcp = await send(base, 'POST', '/mcp', { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
      assert.equal(mcp.status, 400, JSON.stringify(mcp.body))
      assert.match(JSON.stringify(mcp.body), /the Authorization header is given 2 times/)
    }
    // one header: as ever
    assert.equal((await send(base, 'GET', '/v1/resources', { authorization: `Bearer ${tokens.agent}` })).status, 200)
  })
  // One header holding two tokens (`Bearer a b`, or `Bearer a, Bearer b` joined by a proxy) or another scheme
  // (`Basic …`) was 401 "a bearer token is required", to a client that had sent one, counted as a failed guess.
  test('one header holding two tokens, or another scheme, is 400 naming the header and never a guess', async () => {
    const { base, tokens } = env.fx
    for (const value of [`Bearer ${tokens.agent} ${tokens.admin}`, `Bearer ${tokens.agent}, Bearer ${tokens.admin}`, `Basic ${tokens.agent}`, `Token ${tokens.agent}`]) {
      const v1 = await send(base, 'GET', '/v1/resources', { authorization: value })
      assert.equal(v1.status, 400, `${value.slice(0, 12)}: ${JSON.stringify(v1.body)}`)
      assert.equal(v1.body.error.code, 'invalid_request')
      assert.match(v1.body.error.message, /^the Authorization header must be "Bearer <token>", one token: /)
      // the refusal never repeats what was sent: it may hold a token
      assert.ok(!JSON.stringify(v1.body).includes(tokens.agent))
      const mcp = await send(base, 'POST', '/mcp', { authorization: value, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
      assert.equal(mcp.status, 400, JSON.stringify(mcp.body))
    }
    // a missing token is still the 401 it was; the scheme's name in any case and one token are still taken
    assert.equal((await send(base, 'GET', '/v1/resources', {})).status, 401)
    assert.equal((await send(base, 'GET', '/v1/resources', { authorization: 'Bearer' })).status, 401)
    assert.equal((await send(base, 'GET', '/v1/resources', { authorization: `bearer ${tokens.agent}` })).status, 200)
  })
})
