import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { isRefusal } from '../../src/audit/index.js'
import { type McpWorld, startMcpWorld } from './support.js'

/**
 * An MCP request over HTTP answered with a JSON-RPC error at HTTP 200, one that never reaches a tool (an unknown
 * tool, malformed params, an unknown method, a batch with an error in it), is a refusal in the audit trail: the row
 * says `refused`, with the JSON-RPC error's code and message, and the listing marks it a refused claim. Before: the
 * HTTP trail looked only at the status, and wrote each `outcome: ok`.
 */
describe('MCP over HTTP: a JSON-RPC error at 200 is audited as refused', () => {
  let world: McpWorld
  let n = 0
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const marker = `probe-${++n}`
    const response = await fetch(`${world.fx.base}/mcp?m=${marker}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    })
    const answer = JSON.parse(await response.text())
    const rows = await world.fx.gateway.store.db.selectFrom('audit_events').selectAll().where('surface', '=', 'mcp').orderBy('seq', 'desc').limit(1).execute()
    return { status: response.status, answer, row: rows[0]!, summary: JSON.parse(rows[0]!.summary) }
  }
  before(async () => {
    world = await startMcpWorld({ count: 5 })
  })
  after(() => world?.close())

  const assertRefusedRow = (got: Awaited<ReturnType<typeof post>>, code: number, name: string) => {
    assert.equal(got.status, 200, JSON.stringify(got.answer))
    const error = (Array.isArray(got.answer) ? got.answer.find((m: any) => m.error) : got.answer).error
    assert.equal(error.code, code, JSON.stringify(got.answer))
    assert.equal(got.row.action, 'POST /mcp', got.row.summary)
    assert.equal(got.summary.outcome, 'refused', got.row.summary)
    assert.equal(got.summary.error, name, got.row.summary)
    assert.equal(got.summary.json_rpc_error.code, code, got.row.summary)
    assert.equal(got.summary.json_rpc_error.message, error.message, got.row.summary)
    assert.ok(isRefusal(got.summary), 'the one rule reads the row as a refusal')
  }

  test('an unknown method', async () => {
    assertRefusedRow(await post({ jsonrpc: '2.0', id: 1, method: 'no/such_method' }), -32601, 'method_not_found')
  })

  test('a batch with one error in it', async () => {
    assertRefusedRow(await post([{ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { jsonrpc: '2.0', id: 4, method: 'no/such_method' }]), -32601, 'method_not_found')
  })

  test('a batch whose tool call records itself still records the error no tool saw', async () => {
    const got = await post([
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_resources', arguments: {} } },
      { jsonrpc: '2.0', id: 8, method: 'no/such_method' },
    ])
    assertRefusedRow(got, -32601, 'method_not_found')
    const tool = await world.fx.gateway.store.db.selectFrom('audit_events').select('summary').where('action', '=', 'mcp:list_resources').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
    assert.equal(JSON.parse(tool.summary).outcome, 'ok', tool.summary)
  })

  // these reach the tool layer: an isError result, and the tool call's own row says refused
  for (const [label, params, action, code] of [
    ['an unknown tool', { name: 'no_such_tool', arguments: {} }, 'mcp:no_such_tool', 'not_found'],
    ['tools/call with malformed params', { name: 7 }, 'mcp:(unknown tool)', 'invalid_request'],
    ['a tool refusal', { name: 'get_plan', arguments: { plan_id: 'pln_nope' } }, 'mcp:get_plan', 'not_found'],
  ] as const) {
    test(`${label}: an isError result, its row refused`, async () => {
      const got = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params })
      assert.equal(got.answer.result?.isError, true, JSON.stringify(got.answer))
      assert.equal(got.row.action, action, got.row.summary)
      assert.equal(got.summary.outcome, 'refused', got.row.summary)
      assert.equal(got.summary.error, code, got.row.summary)
      assert.ok(isRefusal(got.summary))
    })
  }

  test('the listing marks the row a refused claim', async () => {
    await post({ jsonrpc: '2.0', id: 5, method: 'no/such_method' })
    const admin = await world.fx.gateway.principals.issue({ name: 'auditor', role: 'admin' })
    const listing = (await (await fetch(`${world.fx.base}/v1/audit?limit=500`, { headers: { authorization: `Bearer ${admin.token}` } })).json()) as any
    const row = listing.events.find((e: any) => e.action === 'POST /mcp' && e.summary.json_rpc_error)
    assert.ok(row, JSON.stringify(listing).slice(0, 800))
    assert.equal(row.refused_claim, true)
  })

  test('a successful request stays ok', async () => {
    const got = await post({ jsonrpc: '2.0', id: 6, method: 'tools/list' })
    assert.equal(got.status, 200)
    assert.equal(got.summary.outcome, 'ok', got.row.summary)
    assert.equal(got.summary.error, undefined)
  })
})
