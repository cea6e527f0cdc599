import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { type McpWorld, assertRefused, startMcpWorld, type ToolResult } from './support.js'

/**
 * A tools/call whose shape is wrong (a tool that does not exist, such as an approve tool an agent guessed;
 * arguments that are not an object; a name that is not a string) is the caller's mistake: it is refused like
 * any bad argument, an isError result with a stable code and a message naming what is wrong, and audited.
 * Before: an unknown tool was a text-only error with no code and no audit row, and non-object arguments were
 * JSON-RPC -32603, "Internal error", with a zod dump.
 */
describe('a malformed tools/call is a refusal with a code, audited, never an internal error', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 50 })
  })
  after(async () => {
    await world?.close()
  })

  async function rpc(params: unknown): Promise<any> {
    const response = await fetch(`${world.fx.base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${world.agentToken}`,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
    })
    assert.equal(response.status, 200)
    return response.json()
  }

  async function auditRows(since: number) {
    const db = world.fx.gateway.store.db
    const rows = await db.selectFrom('audit_events').select(['seq', 'action', 'summary']).where('seq', '>', since).where('action', 'like', 'mcp:%').orderBy('seq').execute()
    return rows.map((r) => ({ action: r.action, summary: JSON.parse(r.summary) }))
  }

  async function lastSeq(): Promise<number> {
    const db = world.fx.gateway.store.db
    return Number((await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0)
  }

  test('a tool that does not exist (an agent trying to approve) is not_found, naming it, and leaves an audit row', async () => {
    const since = await lastSeq()
    const client = new Client({ name: 'shape-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${world.agentToken}` } } }))
    try {
      const result = (await client.callTool({ name: 'approve_plan', arguments: { plan_id: 'plan_x' } })) as ToolResult
      assertRefused(result, 'not_found')
      assert.match(result.structuredContent.error.message, /approve_plan/)
      assert.match(result.structuredContent.error.message, /commit_change/, 'it lists the tools there are')
    } finally {
      await client.close()
    }
    const rows = await auditRows(since)
    assert.deepEqual(rows.map((r) => [r.action, r.summary.outcome, r.summary.error]), [['mcp:approve_plan', 'refused', 'not_found']])
    assert.deepEqual(rows[0]!.summary.arguments, { plan_id: 'plan_x' })
  })

  test('arguments that are not an object are invalid_request naming `arguments`, as a tool result, audited', async () => {
    const since = await lastSeq()
    for (const args of [[1], 'status=past_due', null, 5]) {
      const answer = await rpc({ name: 'search', arguments: args })
      assert.equal(answer.error, undefined, `not a protocol error: ${JSON.stringify(answer)}`)
      assertRefused(answer.result, 'invalid_request')
      assert.match(answer.result.structuredContent.error.message, /arguments/)
    }
    const rows = await auditRows(since)
    assert.deepEqual(rows.map((r) => [r.action, r.summary.error]), Array(4).fill(['mcp:search', 'invalid_request']))
  })

  test('a tool name that is not a string, or none, is invalid_request naming `name`; absent arguments are {}', async () => {
    for (const params of [{ name: 5, arguments: {} }, { arguments: {} }]) {
      const answer = await rpc(params)
      assert.equal(answer.error, undefined, `not a protocol error: ${JSON.stringify(answer)}`)
      assertRefused(answer.result, 'invalid_request')
      assert.match(answer.result.structuredContent.error.message, /\bname\b/)
    }
    const listed = await rpc({ name: 'list_resources' })
    assert.equal(listed.result.isError, undefined)
    assert.deepEqual(listed.result.structuredContent.resources.map((r: any) => r.name), ['subscriptions'])
  })
})
