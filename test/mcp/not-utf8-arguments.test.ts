import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { withByteFF } from '../support/not-utf8.js'
import { assertRefused, type McpWorld, startMcpLineSession, startMcpWorld } from './support.js'

// A tool call whose arguments held bytes that are not UTF-8 was decoded with each read as U+FFFD, over /mcp and over
// `warrant mcp`'s stdin alike: search answered "COMPLETE: 0 records … proves there are none" about a name nobody
// sent. Such arguments are refused now as every other unkeepable text is: isError invalid_request naming the argument.
describe('MCP arguments holding bytes that are not UTF-8: isError naming the argument, over HTTP and stdio', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 50 })
  })
  after(() => world?.close())

  const call = (id: number) => withByteFF(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search","arguments":{"resource":"subscriptions","filter":{"customer_name":"B@"}}}}`)

  test('the same isError refusal over /mcp and over a warrant mcp subprocess, and the tool row says refused', { timeout: 120_000 }, async () => {
    const db = world.fx.gateway.store.db
    const since = Number((await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0)
    const response = await fetch(`${world.fx.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: call(7),
    })
    const overHttp = ((await response.json()) as any).result
    assertRefused(overHttp, 'invalid_request')
    assert.match(overHttp.structuredContent.error.message, /^arguments\.filter\.customer_name holds bytes that are not UTF-8/)

    const { sendBytes, answer, end } = await startMcpLineSession(world)
    try {
      sendBytes(call(2))
      assert.deepEqual((await answer(2)).result?.structuredContent, overHttp.structuredContent, 'the same refusal over stdio')
    } finally {
      await end()
    }
    await world.fx.gateway.audit.flush()
    const rows = await db.selectFrom('audit_events').select(['action', 'summary']).where('seq', '>', since).where('level', '=', 'run').orderBy('seq').execute()
    assert.deepEqual(
      rows.map((r) => [r.action, JSON.parse(r.summary).outcome]),
      [
        ['mcp:search', 'refused'],
        // the stdio session's own start, as /mcp records it
        ['stdio:initialize', 'ok'],
        ['stdio:notifications/initialized', 'ok'],
        ['mcp:search', 'refused'],
      ],
    )
  })
})
