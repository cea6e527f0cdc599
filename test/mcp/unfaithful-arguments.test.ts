import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { assertRefused, type McpWorld, postMcpText, startMcpLineSession, startMcpWorld, type ToolResult } from './support.js'

/**
 * A tool's arguments written so JSON.parse would read another request than the one sent (a key given twice, of
 * which it keeps the last; a number a double does not hold, which it rounds) are invalid tool input, answered as
 * every other invalid argument is (and as the MCP specification asks since 2025-11-25, SEP-1303: input validation
 * errors are tool execution errors, so the model can correct itself): an `isError` result `invalid_request` naming
 * the key or the number and where it is, and the tool's own audit row, refused; nothing is made. Before: a JSON-RPC
 * -32602 error, which the official client throws as an exception instead of showing the model a result, and no
 * `mcp:<tool>` row. The same key twice in a message's params outside the arguments stays -32602 (outside-params.test.ts).
 */
describe('a key given twice or a rounded number in tool arguments: an isError result naming it, over HTTP and stdio', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 50 })
  })
  after(async () => {
    await world?.close()
  })

  const cases = [
    ['a filter key given twice', 'create_selection', '{"resource":"subscriptions","filter":{"status":"active","status":"past_due"}}', /key "status" appears twice in arguments\.filter/],
    ['a top-level argument given twice', 'create_selection', '{"resource":"subscriptions","filter":{},"resource":"archive"}', /key "resource" appears twice in arguments\b/],
    ['a number a double rounds', 'create_selection', '{"resource":"subscriptions","filter":{"amount_due":{"gte":9007199254740993}}}', /the number 9007199254740993 at arguments\.filter\.amount_due\.gte/],
  ] as const

  const selections = async () => {
    const db = world.fx.gateway.store.db
    return Number((await db.selectFrom('selections').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  }
  const rowsSince = async (since: number) => {
    const db = world.fx.gateway.store.db
    await world.fx.gateway.audit.flush()
    const rows = await db.selectFrom('audit_events').select(['action', 'summary']).where('seq', '>', since).where('level', '=', 'run').orderBy('seq').execute()
    return rows.map((r) => [r.action, JSON.parse(r.summary).outcome])
  }
  const lastSeq = async () => {
    const db = world.fx.gateway.store.db
    await world.fx.gateway.audit.flush()
    return Number((await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0)
  }

  for (const [what, tool, args, names] of cases) {
    test(`${what}: HTTP and stdio answer the same isError result, the tool's row says refused, nothing is made`, { timeout: 120_000 }, async () => {
      const count = await selections()
      const since = await lastSeq()
      const message = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${tool}","arguments":${args}}}`
      const response = await postMcpText(world, message)
      const body = (await response.json()) as any
      assert.equal(response.status, 200, JSON.stringify(body))
      assert.equal(body.id, 7)
      const overHttp = body.result as ToolResult
      assertRefused(overHttp, 'invalid_request')
      assert.match(overHttp.structuredContent.error.message, names)

      const { send, answer, end, lines } = await startMcpLineSession(world)
      try {
        send(message)
        const line = await answer(7)
        assert.deepEqual(line.result?.structuredContent, overHttp.structuredContent, `the same refusal over stdio: ${JSON.stringify(line)}`)
        // the next call on the same connection is served
        send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', budget: { max_pages: 1 } } } }))
        assert.notEqual((await answer(8)).result?.isError, true)
        // a later message with the same id and faithful arguments is answered for what it says
        send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', budget: { max_pages: 1 } } } }))
        while (lines.filter((l) => l.id === 7).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
        const sevens = lines.filter((l) => l.id === 7)
        assert.equal(sevens.length, 2)
        assert.notEqual(sevens[1].result?.isError, true, JSON.stringify(sevens[1]).slice(0, 300))
      } finally {
        await end()
      }
      assert.equal(await selections(), count, 'no selection is made')
      const rows = (await rowsSince(since)).filter(([action]) => action === `mcp:${tool}`)
      assert.deepEqual(rows, [
        [`mcp:${tool}`, 'refused'],
        [`mcp:${tool}`, 'refused'],
      ])
    })
  }
})
