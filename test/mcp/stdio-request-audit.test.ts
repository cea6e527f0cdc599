import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type McpWorld, postMcpText, startMcpLineSession, startMcpWorld } from './support.js'

/**
 * `warrant mcp` over stdio records the requests outside a tool that it answers without an error as /mcp over HTTP
 * does: one `ok` row each (initialize, the client's notifications, tools/list), named as its error rows are
 * (`stdio:METHOD`); a tool call keeps its own row alone. Before: stdio recorded only tool calls and JSON-RPC
 * errors, so a session's initialize and tools/list showed on the HTTP trail and not on stdio's.
 */

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' }
const TOOLS_LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
const TOOL_CALL = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_resources', arguments: {} } }

describe('MCP over stdio: requests outside a tool are audited as over HTTP', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 5 })
  })
  after(() => world?.close())

  const lastSeq = async () => Number((await world.fx.gateway.store.db.selectFrom('audit_events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m ?? 0)
  const rowsAfter = async (seq: number) =>
    (await world.fx.gateway.store.db.selectFrom('audit_events').selectAll().where('seq', '>', seq).where('surface', '=', 'mcp').orderBy('seq').execute()).map((r) => ({ ...r, summary: JSON.parse(r.summary) }))

  test('initialize, its notification, tools/list and one tool call: one ok row each, the tool call only its own; a refused line under an in-flight id its own', { timeout: 60_000 }, async () => {
    // over HTTP first: what the stdio trail is to match
    const httpStart = await lastSeq()
    for (const message of [INITIALIZE, INITIALIZED, TOOLS_LIST, TOOL_CALL]) {
      const response = await postMcpText(world, JSON.stringify(message))
      assert.ok(response.status < 300, `${message.method}: ${response.status}`)
      await response.arrayBuffer()
    }
    const http = await rowsAfter(httpStart)
    assert.deepEqual(
      http.map((r) => [r.action, r.summary.body?.method ?? null, r.summary.outcome]),
      [
        ['POST /mcp', 'initialize', 'ok'],
        ['POST /mcp', 'notifications/initialized', 'ok'],
        ['POST /mcp', 'tools/list', 'ok'],
        ['mcp:list_resources', null, 'ok'],
      ],
    )

    const startSeq = await lastSeq()
    const session = await startMcpLineSession(world)
    try {
      // tools/list, and at once a line under the same id that is refused before the server sees it (a key named
      // twice): the refusal is that line's row, and tools/list, still in flight, keeps its own
      session.send(`${JSON.stringify(TOOLS_LIST)}\n{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":1,"a":2}}`)
      while (session.lines.filter((l) => l.id === 2).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      assert.ok(session.lines.some((l) => l.id === 2 && l.result?.tools), 'tools/list answered')
      session.send(JSON.stringify(TOOL_CALL))
      assert.equal((await session.answer(3)).result?.isError ?? false, false)
    } finally {
      await session.end()
    }
    await world.fx.gateway.audit.flush()
    const rows = await rowsAfter(startSeq)
    assert.deepEqual(
      rows.map((r) => [r.action, r.summary.method ?? null, r.summary.outcome]),
      [
        ['stdio:initialize', 'initialize', 'ok'],
        ['stdio:notifications/initialized', 'notifications/initialized', 'ok'],
        ['stdio:ping', 'ping', 'refused'],
        ['stdio:tools/list', 'tools/list', 'ok'],
        ['mcp:list_resources', null, 'ok'],
      ],
      JSON.stringify(rows.map((r) => [r.action, r.summary])),
    )
    const tool = rows.at(-1)!
    for (const row of rows.filter((r) => r.summary.outcome === 'ok' && r !== tool)) {
      assert.equal(row.principal, tool.principal, "the token's principal")
      assert.equal(row.level, 'run')
      assert.equal(row.summary.transport, 'stdio')
      assert.equal(row.summary.error, undefined)
      assert.equal(row.summary.json_rpc_error, undefined)
      // the message as sent, as the HTTP row keeps its body
      assert.equal(row.summary.body.method, row.summary.method)
    }
    assert.deepEqual(rows[0]!.summary.body, INITIALIZE)
  })

  /**
   * Two requests in flight under one id (JSON-RPC forbids it; the SDK answers each): the second took the first's place
   * in the trail, so one answered request left no row (tools/list here), and the row left named the other method for
   * the first answer. Each request served leaves its row, saying its id was in flight twice.
   */
  test('two requests in flight under one id: each answered request leaves its row, marked id_in_flight_twice', { timeout: 60_000 }, async () => {
    const startSeq = await lastSeq()
    const session = await startMcpLineSession(world)
    try {
      session.send(`${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })}`)
      while (session.lines.filter((l) => l.id === 9).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      session.send(`${JSON.stringify({ ...TOOL_CALL, id: 10 })}\n${JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' })}`)
      while (session.lines.filter((l) => l.id === 10).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      session.send(JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'ping' }))
      await session.answer(11)
    } finally {
      await session.end()
    }
    await world.fx.gateway.audit.flush()
    const rows = (await rowsAfter(startSeq)).slice(2) // initialize and its notification
    const seen = rows.map((r) => [r.action, r.summary.outcome, r.summary.body?.id ?? null, r.summary.id_in_flight_twice ?? false])
    const sorted = (list: unknown[][]) => [...list].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
    assert.deepEqual(
      sorted(seen),
      sorted([
        ['stdio:tools/list', 'ok', 9, true],
        ['stdio:ping', 'ok', 9, true],
        ['mcp:list_resources', 'ok', null, false],
        ['stdio:tools/list', 'ok', 10, true],
        ['stdio:ping', 'ok', 11, false],
      ]),
      JSON.stringify(rows.map((r) => [r.action, r.summary])),
    )
  })

  /**
   * A tool call and a request the server answers with a JSON-RPC error, in flight under one id: the error was taken
   * for the tool call's answer, so the call left a refused `stdio:tools/call` row besides its own `mcp:TOOL` row, and
   * the failed request none. A tool call's row is its tool's alone; the error is the other request's row.
   */
  test('a tool call and a failing request under one id: the tool call leaves its own row only, the error its request\'s', { timeout: 60_000 }, async () => {
    const startSeq = await lastSeq()
    const session = await startMcpLineSession(world)
    const unknown = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'no/such_method' })
    try {
      session.send(`${unknown(12)}\n${JSON.stringify({ ...TOOL_CALL, id: 12 })}`)
      while (session.lines.filter((l) => l.id === 12).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      session.send(`${JSON.stringify({ ...TOOL_CALL, id: 13 })}\n${unknown(13)}`)
      while (session.lines.filter((l) => l.id === 13).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
    } finally {
      await session.end()
    }
    await world.fx.gateway.audit.flush()
    const rows = (await rowsAfter(startSeq)).slice(2) // initialize and its notification
    const seen = rows.map((r) => [r.action, r.summary.outcome, r.summary.body?.id ?? null])
    const sorted = (list: unknown[][]) => [...list].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
    assert.deepEqual(
      sorted(seen),
      sorted([
        ['stdio:no/such_method', 'refused', 12],
        ['mcp:list_resources', 'ok', null],
        ['mcp:list_resources', 'ok', null],
        ['stdio:no/such_method', 'refused', 13],
      ]),
      JSON.stringify(rows.map((r) => [r.action, r.summary])),
    )
  })
})
