import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type McpWorld, startMcpLineSession, startMcpWorld } from './support.js'

const MAX = 64 * 1024

/**
 * /mcp refuses a body over server.max_body_bytes (413, a JSON-RPC -32000 payload_too_large) without reading it;
 * `warrant mcp` buffered a stdin line of any length, whole, before reading it: a client writing a line with no end
 * grew the process (and the executors it runs) until the system killed it, and a line refused over HTTP was served
 * over stdio. A line longer than the limit is now answered as /mcp answers, its bytes dropped as they come, and the
 * next line is served.
 */
describe('stdio: a line longer than server.max_body_bytes is refused as /mcp refuses such a body', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 50, edit: (config) => void (config.server = { ...config.server, max_body_bytes: MAX }) })
  })
  after(() => world?.close())

  test('a 200 KB call: -32000 payload_too_large naming the limit; the next call is answered', { timeout: 120_000 }, async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', filter: { customer_name: 'x'.repeat(200 * 1024) } } } })
    const overHttp = await fetch(`${world.fx.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: huge,
    })
    const httpAnswer = (await overHttp.json()) as any
    assert.equal(overHttp.status, 413)
    const { send, answer, end, lines } = await startMcpLineSession(world)
    try {
      send(huge)
      send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', filter: { status: 'active' } } } }))
      assert.equal((await answer(3)).result.isError, undefined)
      const refused = lines.find((line) => line.error?.code === -32000)
      assert.ok(refused, `no -32000 answer: ${JSON.stringify(lines.map((l) => l.id ?? l.error?.code))}`)
      assert.equal(refused.id, null)
      assert.match(refused.error.message, new RegExp(`^payload_too_large: the line is larger than ${MAX} bytes`))
      assert.equal(refused.error.code, httpAnswer.error.code, 'the code /mcp answers')
      assert.equal(lines.find((line) => line.id === 2), undefined, 'the long line was never served')
    } finally {
      await end()
    }
  })
})
