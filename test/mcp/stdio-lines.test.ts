import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, test } from 'node:test'
import { withoutDuplicateKeys } from '../../src/mcp/index.js'
import { startMcpLineSession, startMcpWorld } from './support.js'

/** Feeds lines through the stdio door; returns what reaches the SDK and what was answered on stdout. */
async function through(lines: readonly string[]): Promise<{ passed: string[]; answered: any[] }> {
  const input = new PassThrough()
  const output = new PassThrough()
  let answered = ''
  output.on('data', (c: Buffer) => (answered += c))
  const door = withoutDuplicateKeys(input, output)
  let passed = ''
  door.on('data', (c: Buffer) => (passed += c))
  const ended = new Promise((resolve) => door.on('end', resolve))
  input.end(lines.map((l) => `${l}\n`).join(''))
  await ended
  return { passed: passed.split('\n').filter(Boolean), answered: answered.split('\n').filter(Boolean).map((l) => JSON.parse(l)) }
}

/**
 * A line on stdin that is not a JSON-RPC message is answered, as over HTTP: -32700 for a line that is not JSON,
 * -32600 for JSON that is not a JSON-RPC message (with its id when it has one). Before: the SDK's stdio
 * transport dropped it without a word, on stdout or stderr, and a client waiting for that id waited forever.
 */
describe('stdio: a line that is not a JSON-RPC message is answered, never dropped in silence', () => {
  test('not JSON is -32700, id null; JSON that is not JSON-RPC is -32600 with its id; good lines pass', async () => {
    const good = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' })
    const { passed, answered } = await through(['this is not json', '{"jsonrpc":"2.0","id":3}', '[]', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', '', good])
    assert.deepEqual(passed, [good])
    assert.deepEqual(
      answered.map((a) => [a.jsonrpc, a.id, a.error.code]),
      [
        ['2.0', null, -32700],
        ['2.0', 3, -32600],
        ['2.0', null, -32600],
        ['2.0', null, -32600],
      ],
    )
    assert.ok(answered.every((a) => typeof a.error.message === 'string' && a.error.message.length > 0))
  })

  test('a key named twice is still refused, and a notification or a response passes', async () => {
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
    const response = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })
    const { passed, answered } = await through(['{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":1,"a":2}}', notification, response])
    assert.deepEqual(passed, [notification, response])
    assert.deepEqual(answered.map((a) => [a.id, a.error.code]), [[4, -32602]])
  })
})

/**
 * stdin arrives in chunks of bytes, cut wherever the pipe cut them (64 KB on Linux), not between characters. Before:
 * each chunk was decoded alone, so a character whose bytes straddled a cut became two U+FFFD, and the tool acted on
 * a value nobody sent (a selection froze on `customer_name` "…\uFFFD\uFFFD…").
 */
describe('stdio: a character cut between two chunks of stdin reaches the tool whole', () => {
  test('a chunk ending inside a character (é, €, 𝄞) passes the line unchanged', async () => {
    const line = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'search', arguments: { resource: 'é€𝄞' } } })
    const bytes = Buffer.from(`${line}\n`)
    for (const character of ['é', '€', '𝄞']) {
      const at = bytes.indexOf(Buffer.from(character)) + 1
      const input = new PassThrough()
      const door = withoutDuplicateKeys(input, new PassThrough())
      let passed = ''
      door.setEncoding('utf8').on('data', (c: string) => (passed += c))
      const ended = new Promise((resolve) => door.on('end', resolve))
      input.write(bytes.subarray(0, at))
      input.end(bytes.subarray(at))
      await ended
      assert.equal(passed, `${line}\n`, `cut inside ${character}`)
    }
  })

  test('`warrant mcp` freezes a long non-ASCII filter value as sent', { timeout: 120_000 }, async () => {
    const world = await startMcpWorld({ count: 50 })
    const { send, answer, end } = await startMcpLineSession(world)
    try {
      // 2 bytes a character, 200 KB a line (50 values of 2,000 characters: one holds at most 2,048): stdin's 64 KB
      // chunks cut inside a character about every other time
      for (const id of [2, 3, 4, 5]) {
        const values = Array.from({ length: 50 }, (_, i) => `${i}${'x'.repeat(id)}${'é'.repeat(2000)}`)
        send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'create_selection', arguments: { resource: 'subscriptions', filter: { customer_name: { in: values } } } } }))
        const selection = (await answer(id)).result.structuredContent
        assert.ok(selection, `line ${id}: ${JSON.stringify((await answer(id)).result?.content ?? (await answer(id)).error)}`)
        assert.deepEqual(selection.selector.filter.customer_name.in, values, `line ${id}: the values the selection froze are the values sent`)
      }
    } finally {
      await end()
      await world.close()
    }
  })
})

/**
 * A line nested deeper than a call stack goes (JSON.parse reads it) is refused like any too-deep argument, and the
 * server goes on. Before: the stdin door's walk over the text recursed a level at a time and threw RangeError
 * outside any handler: `warrant mcp` exited 1, every call in flight unanswered; /mcp sent as text/plain was a 500.
 */
describe('a message nested 20,000 deep is refused, never a crash', () => {
  const deepCall = (id: number) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search","arguments":{"resource":"subscriptions","filter":{"customer_name":${'['.repeat(20_000)}${']'.repeat(20_000)}}}}}`

  test('`warrant mcp`: isError invalid_request naming the depth, then the next call is served', { timeout: 120_000 }, async () => {
    const world = await startMcpWorld({ count: 50 })
    const { send, answer, end } = await startMcpLineSession(world)
    try {
      send(deepCall(2))
      const refused = (await answer(2)).result
      assert.equal(refused.isError, true)
      assert.equal(refused.structuredContent.error.code, 'invalid_request')
      assert.match(refused.structuredContent.error.message, /nested deeper than 32 levels \(at arguments\.filter\.customer_name/)
      send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_resources', arguments: {} } }))
      assert.equal((await answer(3)).result.structuredContent.resources[0].name, 'subscriptions')
    } finally {
      await end()
      await world.close()
    }
  })

  test('/mcp with a content type the JSON door does not read: the transport\'s 415, not a 500', { timeout: 120_000 }, async () => {
    const world = await startMcpWorld({ count: 50 })
    try {
      const response = await fetch(`${world.fx.base}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
        body: deepCall(4),
      })
      assert.equal(response.status, 415, await response.text())
    } finally {
      await world.close()
    }
  })
})
