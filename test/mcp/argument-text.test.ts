import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { assertRefused, connectAgent, type McpWorld, postMcpText, startMcpLineSession, startMcpWorld, type ToolResult } from './support.js'

/**
 * Arguments no store or digest can hold faithfully (a NUL byte, a lone surrogate), a `__proto__` key, or nesting
 * past 32 levels are the caller's mistake: over HTTP as over stdio, an `isError` result `invalid_request` naming
 * the argument, and the call's own audit row. Before: over HTTP the /v1 input guard answered /mcp first, with an
 * HTTP error body that is no JSON-RPC message (no `jsonrpc`, no `id`), so the official client threw
 * "Streamable HTTP error" instead of returning a result, and the row was `POST /mcp`, not the tool's.
 */
describe('arguments holding text no store keeps: the same isError refusal over HTTP and stdio', () => {
  let world: McpWorld
  let client: Client
  before(async () => {
    world = await startMcpWorld({ count: 50 })
    client = await connectAgent(world, 'argument-text')
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  const nested = (depth: number): unknown => (depth === 0 ? 'x' : [nested(depth - 1)])
  const cases: readonly (readonly [string, Record<string, unknown>, RegExp])[] = [
    ['a NUL byte', { resource: 'subscriptions', filter: { customer_name: 'a\u0000b' } }, /^arguments\.filter\.customer_name holds a NUL byte$/],
    ['a lone surrogate', { resource: 'subscriptions', filter: { customer_name: '\ud800' } }, /^arguments\.filter\.customer_name holds an unpaired UTF-16 surrogate/],
    ['a __proto__ key', JSON.parse('{"resource":"subscriptions","filter":{"__proto__":{"eq":1}}}'), /^arguments\.filter has a "__proto__" key/],
    ['nesting past 32 levels', { resource: 'subscriptions', filter: { customer_name: nested(40) } }, /^the JSON body is nested deeper than 32 levels \(at arguments\.filter\.customer_name/],
  ]

  for (const [what, args, message] of cases) {
    test(`${what}: the official client over HTTP gets an isError invalid_request naming it, as stdio answers, and the row is the tool's`, { timeout: 120_000 }, async () => {
      const db = world.fx.gateway.store.db
      const since = Number((await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0)
      const overHttp = (await client.callTool({ name: 'search', arguments: args })) as ToolResult
      assertRefused(overHttp, 'invalid_request')
      assert.match(overHttp.structuredContent.error.message, message)

      const { send, answer, end } = await startMcpLineSession(world)
      try {
        send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: args } }))
        assert.deepEqual((await answer(2)).result.structuredContent, overHttp.structuredContent, 'the same refusal over stdio')
      } finally {
        await end()
      }

      await world.fx.gateway.audit.flush()
      // `GET /mcp` is the client opening its event stream (405, a stateless endpoint), whenever it gets to it
      const rows = await db.selectFrom('audit_events').select(['action', 'surface', 'summary']).where('seq', '>', since).where('level', '=', 'run').where('action', '!=', 'GET /mcp').orderBy('seq').execute()
      assert.deepEqual(
        rows.map((r) => [r.action, r.surface, JSON.parse(r.summary).outcome, JSON.parse(r.summary).error]),
        [
          ['mcp:search', 'mcp', 'refused', 'invalid_request'],
          // the stdio session's own start, as /mcp records the client's
          ['stdio:initialize', 'mcp', 'ok', undefined],
          ['stdio:notifications/initialized', 'mcp', 'ok', undefined],
          ['mcp:search', 'mcp', 'refused', 'invalid_request'],
        ],
      )
    })
  }

  test('such text outside the arguments is a JSON-RPC error with the request id, naming where', async () => {
    const response = await postMcpText(world, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions' }, _meta: { note: 'a\u0000b' } } }))
    assert.equal(response.status, 400)
    const body = (await response.json()) as any
    assert.equal(body.jsonrpc, '2.0')
    assert.equal(body.id, 8)
    assert.equal(body.error.code, -32602)
    assert.match(body.error.message, /^invalid_request: body\.params\._meta\.note holds a NUL byte$/)
  })
})
