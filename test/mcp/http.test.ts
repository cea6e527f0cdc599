import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { type McpWorld, runAgentFlow, startMcpWorld, TOOL_NAMES } from './support.js'

async function connect(world: McpWorld, token: string | null) {
  const transport = new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), {
    requestInit: token === null ? {} : { headers: { Authorization: `Bearer ${token}` } },
  })
  const client = new Client({ name: 'warrant-http-test', version: '1.0.0' })
  await client.connect(transport)
  return client
}

/** A raw JSON-RPC POST, as a client on any protocol version sends it. */
async function post(world: McpWorld, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${world.fx.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null }
}

describe('MCP over streamable HTTP at /mcp (official MCP client)', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld()
  })
  after(async () => {
    await world?.close()
  })

  test('the whole flow: search, selection, proposal, HTTP approval by a reviewer, commit, operation; every shortcut refused', { timeout: 120_000 }, async () => {
    const client = await connect(world, world.agentToken)
    try {
      await runAgentFlow(client, world)
    } finally {
      await client.close()
    }
  })

  test('no token, or a bad one → 401 with the unauthenticated code and a WWW-Authenticate challenge; the SDK client cannot connect', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'anon', version: '0' } } }
    const none = await post(world, initialize)
    assert.equal(none.status, 401)
    assert.equal(none.body.error.code, 'unauthenticated')
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/)
    const bad = await post(world, initialize, { authorization: 'Bearer wrt_agent_forged' })
    assert.equal(bad.status, 401)
    assert.equal(bad.body.error.code, 'unauthenticated')
    await assert.rejects(connect(world, null))
  })

  test('an old-protocol client (2024-11-05) and a current one both initialise and call tools', async () => {
    const auth = { authorization: `Bearer ${world.agentToken}` }
    for (const version of ['2024-11-05', '2025-03-26', LATEST_PROTOCOL_VERSION]) {
      const init = await post(world, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: `raw-${version}`, version: '0' } } }, auth)
      assert.equal(init.status, 200, JSON.stringify(init.body))
      assert.equal(init.body.result.protocolVersion, version)
      assert.equal(init.body.result.serverInfo.name, 'warrant')
      const headers = { ...auth, 'mcp-protocol-version': version }
      const initialized = await fetch(`${world.fx.base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      })
      assert.equal(initialized.status, 202)
      const list = await post(world, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, headers)
      assert.equal(list.body.result.tools.length, TOOL_NAMES.length)
      const call = await post(world, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', filter: { region: 'eu' }, page_size: 20, budget: { max_pages: 1 } } } }, headers)
      assert.match(call.body.result.content[0].text, /^INCOMPLETE \(CLIENT_LIMIT_REACHED/)
      assert.equal(JSON.parse(call.body.result.content[1].text).complete, false)
      assert.equal(call.body.result.structuredContent.complete, false)
    }
  })

  test('stateless: GET and DELETE are 405; every request is authenticated on its own', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${world.fx.base}/mcp`, { method, headers: { authorization: `Bearer ${world.agentToken}`, accept: 'text/event-stream' } })
      assert.equal(response.status, 405)
      assert.equal(response.headers.get('allow'), 'POST')
    }
    const client = await connect(world, world.agentToken)
    try {
      const revoked = await world.fx.gateway.principals.issue({ name: 'short-lived', role: 'agent', scopes: { resources: ['subscriptions'], actions: [] } })
      const other = await connect(world, revoked.token)
      assert.equal((await other.listTools()).tools.length, TOOL_NAMES.length)
      await world.fx.gateway.principals.revoke(revoked.token_id)
      await assert.rejects(other.listTools(), /401|unauthenticated|Unauthorized/i)
      await other.close().catch(() => undefined)
      assert.equal((await client.listTools()).tools.length, TOOL_NAMES.length)
    } finally {
      await client.close()
    }
  })
})
