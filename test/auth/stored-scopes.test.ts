import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'

// A principal's stored scopes that do not parse (a row edited by hand, or written by another version) made every
// request with its token 400 invalid_request "invalid request: resources: …", naming no part of the request, and
// told an MCP agent to fix its arguments: the caller blamed for the store's row. It is the gateway's fault: 500
// internal, logged with an id naming the principal.
describe("a principal's stored scopes that do not parse are the gateway's fault, not the caller's", () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50 })

  test('/v1 and /mcp answer internal, naming no request field', async () => {
    const { fx } = env
    await fx.gateway.store.db.updateTable('principals').set({ scopes: JSON.stringify({ resources: 'subscriptions', actions: '*' }) }).where('role', '=', 'agent').execute()
    const answer = await fx.as('agent')('GET', '/v1/resources')
    assert.equal(answer.status, 500, JSON.stringify(answer.body))
    assert.equal(answer.body.error.code, 'internal')
    const mcp = await fetch(`${fx.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.tokens.agent}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_resources', arguments: {} } }),
    })
    const text = await mcp.text()
    assert.equal(mcp.status, 500, text)
    assert.doesNotMatch(text, /invalid_request/)
  })
})
