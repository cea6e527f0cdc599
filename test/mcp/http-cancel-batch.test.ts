import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type McpWorld, lastAuditSeq, mcpRowsAfter, postMcpText, startMcpWorld } from './support.js'

/**
 * A batch at /mcp that carries a request and a `notifications/cancelled` naming it: the SDK dropped the request's
 * answer, and the JSON answer waits for every request's, so the POST hung for ever (the tool, if one, ran) and left no
 * audit row. It is refused: 400, -32600 naming the id, one refused `POST /mcp` row keeping the body, nothing run. A
 * cancellation naming no request of its batch (stateless: each POST is its own server) cancels nothing, as before.
 */
describe('MCP over HTTP: a batch cancelling a request it carries', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 5 })
  })
  after(() => world?.close())

  const lastSeq = () => lastAuditSeq(world)
  const rowsAfter = (seq: number) => mcpRowsAfter(world, seq)
  const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'stop' } })
  const post = async (batch: unknown[]) => {
    const response = await Promise.race([postMcpText(world, JSON.stringify(batch)), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer in 5 s')), 5000))])
    return { status: response.status, body: JSON.parse((await response.text()) || 'null') }
  }

  for (const request of [
    { jsonrpc: '2.0', id: 5, method: 'tools/list' },
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'list_resources', arguments: {} } },
  ])
    test(`${request.method} and its cancellation in one batch: 400 -32600, one refused row, nothing run`, { timeout: 30_000 }, async () => {
      const startSeq = await lastSeq()
      const answer = await post([request, cancel(5)])
      assert.equal(answer.status, 400, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, -32600)
      assert.match(answer.body.error.message, /cancels a request it carries \(id 5\)/)
      await world.fx.gateway.audit.flush()
      const rows = await rowsAfter(startSeq)
      assert.deepEqual(
        rows.map((r) => [r.action, r.summary.outcome, r.summary.json_rpc_error?.code]),
        [['POST /mcp', 'refused', -32600]],
        JSON.stringify(rows.map((r) => [r.action, r.summary])),
      )
      assert.deepEqual(rows[0]!.summary.body, [request, cancel(5)])
    })

  test('a cancellation naming no request of its batch (another id, 0): the request is answered, as before', { timeout: 30_000 }, async () => {
    const answer = await post([{ jsonrpc: '2.0', id: 6, method: 'tools/list' }, cancel(7), cancel(0)])
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    // the SDK answers a batch holding one request with that request's answer alone
    assert.ok(answer.body?.result?.tools, JSON.stringify(answer.body).slice(0, 300))
  })
})
