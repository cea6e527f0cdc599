import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type McpWorld, startMcpWorld } from './support.js'

const MAX_BODY = 4096

/**
 * Every body /mcp cannot take is answered as MCP's streamable HTTP transport answers one (the SDK server's own
 * shape): an HTTP 4xx whose body is a JSON-RPC error naming what is wrong. Before: a body over server.max_body_bytes
 * (and a NUL byte in the query) got the /v1 error body, no JSON-RPC message at all; JSON that is no JSON-RPC message
 * was -32700 "Parse error" (it parsed; -32600 is Invalid Request, as stdio answers it), and an empty batch was 202,
 * answered with nothing.
 */
describe('MCP over HTTP: a body /mcp cannot take is a JSON-RPC error', () => {
  let world: McpWorld
  let post: (body: string, path?: string) => Promise<{ status: number; body: any }>
  before(async () => {
    world = await startMcpWorld({ count: 5, edit: (config) => (config.server.max_body_bytes = MAX_BODY) })
    post = async (body, path = '/mcp') => {
      const response = await fetch(`${world.fx.base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body,
      })
      const text = await response.text()
      return { status: response.status, body: JSON.parse(text) }
    }
  })
  after(() => world?.close())

  const jsonRpcError = (answer: { status: number; body: any }, status: number, code: number, id: number | null, message: RegExp) => {
    assert.equal(answer.status, status, JSON.stringify(answer.body))
    assert.equal(answer.body.jsonrpc, '2.0', JSON.stringify(answer.body))
    assert.equal(answer.body.id, id)
    assert.equal(answer.body.error.code, code, JSON.stringify(answer.body))
    assert.match(answer.body.error.message, message)
  }

  test('a body over server.max_body_bytes: 413, a JSON-RPC error naming the limit', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { pad: 'x'.repeat(MAX_BODY) } })
    const answer = await post(big)
    jsonRpcError(answer, 413, -32000, null, /larger than 4096 bytes.*server\.max_body_bytes/)
    assert.equal(answer.body.error.data.error.code, 'payload_too_large')
    // the audit row still names the refusal by its code
    const row = await world.fx.gateway.store.db.selectFrom('audit_events').select('summary').where('action', '=', 'POST /mcp').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
    assert.equal(JSON.parse(row.summary).error, 'payload_too_large', row.summary)
  })

  test('the official client over the limit: its error carries the JSON-RPC error, status 413', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${world.agentToken}` } } })
    const client = new Client({ name: 'warrant-bad-body-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      await assert.rejects(client.callTool({ name: 'search', arguments: { resource: 'subscriptions', filter: { region: 'x'.repeat(MAX_BODY) } } }), (error: Error) => {
        assert.ok(error instanceof StreamableHTTPError, String(error))
        assert.equal(error.code, 413)
        assert.match(error.message, /"jsonrpc":"2\.0".*"code":-32000.*larger than 4096 bytes/)
        return true
      })
    } finally {
      await client.close()
    }
  })

  test('not JSON: 400, -32700', async () => {
    jsonRpcError(await post('hello'), 400, -32700, null, /not JSON/)
  })

  test('JSON that is no JSON-RPC message: 400, -32600 Invalid Request, with its id when it has one', async () => {
    jsonRpcError(await post('{"foo":1}'), 400, -32600, null, /Invalid Request: not a JSON-RPC 2\.0 message/)
    jsonRpcError(await post('42'), 400, -32600, null, /Invalid Request/)
    jsonRpcError(await post('{"jsonrpc":"2.0","id":5,"method":7}'), 400, -32600, 5, /Invalid Request/)
    jsonRpcError(await post('[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"id":2}]'), 400, -32600, 2, /Invalid Request/)
    jsonRpcError(await post('[]'), 400, -32600, null, /Invalid Request: an empty batch/)
  })

  test('a NUL byte in the query: 400, a JSON-RPC error naming it', async () => {
    jsonRpcError(await post('{"jsonrpc":"2.0","id":3,"method":"tools/list"}', '/mcp?x=%00'), 400, -32600, null, /query parameter "x" holds a NUL byte/)
  })
})
