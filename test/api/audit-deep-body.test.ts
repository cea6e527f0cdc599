import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

/**
 * README: "Every request leaves a row … a 400 included". A JSON body nested deeper than the guard's 32 levels is
 * refused (400), but the audit trail's `summarise` runs JSON.stringify over the whole parsed body, which throws
 * RangeError (call stack) on a deep one; the trail caught it, logged it, and wrote no row. The body is now
 * named as unrecordable and the row written.
 */
describe('a deeply nested body is refused and still recorded', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 20 })
  })
  after(() => fx?.close())

  const runRows = async () => (await fx.gateway.store.db.selectFrom('audit_events').select('seq').where('level', '=', 'run').execute()).length

  for (const [path, extra] of [
    ['/v1/resources/subscriptions/search', { authorization: true }],
    ['/mcp', { authorization: true }],
  ] as const) {
    // /mcp: a tool call's arguments are the tool's to refuse, an isError result (a JSON-RPC answer, 200), as over stdio
    test(`POST ${path}: refused and exactly one audit row`, async () => {
      const rowsBefore = await runRows()
      const deep = '['.repeat(20_000) + ']'.repeat(20_000)
      const response = await fetch(`${fx.base}${path}`, {
        method: 'POST',
        headers: { ...(extra.authorization ? { authorization: `Bearer ${fx.tokens.agent}` } : {}), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: path === '/mcp' ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_resources","arguments":{"x":${deep}}}}` : `{"filter":{},"x":${deep}}`,
      })
      const answer = (await response.json()) as any
      await fx.gateway.audit.flush()
      if (path === '/mcp') {
        assert.equal(response.status, 200)
        assert.equal(answer.result.isError, true)
        assert.equal(answer.result.structuredContent.error.code, 'invalid_request')
      } else assert.equal(response.status, 400)
      assert.equal(await runRows(), rowsBefore + 1, 'every request leaves a row, refusals included')
      const last = await fx.gateway.store.db.selectFrom('audit_events').select('summary').where('level', '=', 'run').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
      assert.match(last.summary, /"unrecorded":"the value cannot be serialised \(nested too deeply\)"/)
    })
  }
})
