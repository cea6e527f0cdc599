import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type McpWorld, callTool, startMcpWorld } from './support.js'

/**
 * Every MCP tool call leaves one run-level audit row (surface `mcp`, action `mcp:<tool>`) with its outcome:
 * `ok`, or the refusal's code. The calls below mix answers and refusals; the rows are read straight from the
 * store, so a removed audit call leaves the count short.
 */
describe('every MCP tool call is audited, answered or refused', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 300 })
  })
  after(async () => {
    await world?.close()
  })

  test('one audit row per call, in order, naming the tool, the principal and the outcome', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${world.agentToken}` } } })
    const client = new Client({ name: 'warrant-audit-test', version: '1.0.0' })
    await client.connect(transport)
    const db = world.fx.gateway.store.db
    const before = (await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0
    const calls: [string, Record<string, unknown>, string][] = [
      ['list_resources', {}, 'ok'],
      ['search', { resource: 'archive', filter: {} }, 'forbidden'],
      ['get_plan', { plan_id: 'plan_does_not_exist' }, 'not_found'],
      ['commit_change', { plan_id: 'plan_does_not_exist', idempotency_key: 'k-audit' }, 'invalid_request'],
      ['search', { resource: 'subscriptions', filter: { status: 'past_due' }, budget: { max_items: 5 } }, 'ok'],
    ]
    try {
      for (const [name, args, outcome] of calls) {
        const result = await callTool(client, name, args)
        assert.equal(result.isError === true, outcome !== 'ok', `${name}: ${JSON.stringify(result.structuredContent).slice(0, 300)}`)
      }
    } finally {
      await client.close()
    }
    const principal = (await world.fx.gateway.principals.authenticate(world.agentToken, 'mcp')).principal
    const rows = await db
      .selectFrom('audit_events')
      .select(['action', 'principal', 'surface', 'summary', 'plan_id'])
      .where('seq', '>', Number(before))
      .where('action', 'like', 'mcp:%')
      .orderBy('seq')
      .execute()
    assert.deepEqual(
      rows.map((r) => [r.action, r.principal, r.surface, JSON.parse(r.summary).outcome === 'refused' ? JSON.parse(r.summary).error : JSON.parse(r.summary).outcome]),
      calls.map(([name, , outcome]) => [`mcp:${name}`, principal, 'mcp', outcome]),
    )
    assert.equal(rows[2]!.plan_id, 'plan_does_not_exist', 'the plan a call named is on its row')
  })
})
