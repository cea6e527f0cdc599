import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { isRefusal, isRefusedClaim } from '../../src/audit/entry.js'
import { type McpWorld, startMcpLineSession, startMcpWorld } from './support.js'

/**
 * `warrant mcp` over stdio records a JSON-RPC error it answers outside a tool (an unknown method, a line that is not
 * JSON, JSON that is no JSON-RPC message, a key named twice) as /mcp over HTTP does: one refused row per error
 * answer, naming the method and the JSON-RPC code. Before: only tool calls were recorded on stdio, so an agent
 * probing methods left no mark in the trail.
 */
describe('MCP over stdio: a JSON-RPC error outside a tool is audited as refused', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 5 })
  })
  after(() => world?.close())

  test('one refused row per error answer, naming method and code; a tool call keeps its own row', { timeout: 60_000 }, async () => {
    const startSeq = Number((await world.fx.gateway.store.db.selectFrom('audit_events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m ?? 0)
    const session = await startMcpLineSession(world)
    const answers: any[] = []
    try {
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'no/such_method' }))
      answers.push(await session.answer(2))
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_resources', arguments: {} } }))
      assert.equal((await session.answer(3)).result?.isError ?? false, false)
      session.send('this is not json')
      session.send('{"jsonrpc":"2.0","id":4}')
      answers.push(await session.answer(4))
      session.send('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"a":1,"a":2}}')
      answers.push(await session.answer(5))
    } finally {
      await session.end()
    }
    const parseError = session.lines.find((l) => l.id === null && l.error?.code === -32700)
    assert.ok(parseError, JSON.stringify(session.lines))
    await world.fx.gateway.audit.flush()
    const rows = (await world.fx.gateway.store.db.selectFrom('audit_events').selectAll().where('seq', '>', startSeq).orderBy('seq').execute()).map((r) => ({ ...r, summary: JSON.parse(r.summary) }))
    const refused = rows.filter((r) => r.summary.json_rpc_error !== undefined)
    const tool = rows.filter((r) => r.action === 'mcp:list_resources')
    const expected = [
      { method: 'no/such_method', code: -32601, error: 'method_not_found', message: answers[0].error.message },
      { method: null, code: -32700, error: 'parse_error', message: parseError.error.message },
      { method: null, code: -32600, error: 'invalid_request', message: answers[1].error.message },
      // the Warrant refusal it carries as data names it, as over HTTP
      { method: 'tools/list', code: -32602, error: answers[2].error.data?.error?.code ?? 'invalid_params', message: answers[2].error.message },
    ]
    assert.equal(refused.length, expected.length, JSON.stringify(rows.map((r) => [r.action, r.summary])))
    for (const [i, want] of expected.entries()) {
      const row = refused[i]!
      assert.equal(row.surface, 'mcp')
      assert.equal(row.level, 'run')
      assert.equal(row.principal, tool[0]!.principal, "the token's principal")
      assert.equal(row.summary.outcome, 'refused', JSON.stringify(row.summary))
      assert.equal(row.summary.method, want.method, JSON.stringify(row.summary))
      assert.equal(row.summary.error, want.error, JSON.stringify(row.summary))
      assert.deepEqual(row.summary.json_rpc_error, { code: want.code, message: want.message })
      assert.ok(isRefusal(row.summary) && isRefusedClaim(row), 'the one rule reads it refused')
    }
    assert.equal(refused[0]!.action, 'stdio:no/such_method')
    // the tool call is its own row, ok, and no error row stands for it
    assert.equal(tool.length, 1)
    assert.equal(tool[0]!.summary.outcome, 'ok')
  })
})
