import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type McpWorld, postMcpText, startMcpLineSession, startMcpWorld } from './support.js'

/**
 * A message whose own members are unfaithful (a key given twice, a number JSON would round, nesting past 32
 * levels, a NUL byte) outside `params` is no valid request: -32600 Invalid Request, naming where; inside `params`
 * it stays -32602 Invalid params. Same answer over raw HTTP and over stdio. The id is the message's, except when
 * the id itself is what is in doubt (given twice, or rounded): then null, as JSON-RPC 2.0 says. Before: every one
 * of them was -32602, a duplicated "method" or "id" at the top level included, and over stdio nesting or a NUL
 * byte outside a tool call's arguments passed to the SDK unread.
 */
const nested = (depth: number): unknown => (depth === 0 ? 'x' : [nested(depth - 1)])
const deep = JSON.stringify(nested(40))

/** [what, the message as sent, the JSON-RPC code, the id answered, the message's text] */
const CASES: readonly (readonly [string, string, number, number | null, RegExp])[] = [
  ['a duplicated "method" at the top level', '{"jsonrpc":"2.0","id":11,"method":"tools/list","method":"tools/call","params":{}}', -32600, 11, /^invalid_request: key "method" appears twice in the top level of the message; /],
  ['a duplicated "id" at the top level', '{"jsonrpc":"2.0","id":12,"id":13,"method":"tools/list"}', -32600, null, /^invalid_request: key "id" appears twice in the top level of the message/],
  ['a duplicated "params"', '{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{},"params":{"cursor":"x"}}', -32600, 14, /key "params" appears twice/],
  ['an id JSON would round', '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}', -32600, null, /^invalid_request: the number 9007199254740993 at "id" of the message/],
  ['nesting past 32 levels outside params', `{"jsonrpc":"2.0","id":15,"method":"tools/list","extra":${deep}}`, -32600, 15, /^invalid_request: the JSON body is nested deeper than 32 levels \(at (body|line)\.extra/],
  ['a NUL byte outside params', '{"jsonrpc":"2.0","id":16,"method":"tools/list","note":"a\\u0000b"}', -32600, 16, /^invalid_request: (body|line)\.note holds a NUL byte$/],
  ['a duplicated key inside params', '{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"cursor":"a","cursor":"b"}}', -32602, 17, /^invalid_request: .*key "cursor" appears twice in "params"/],
  ['nesting past 32 levels inside params', `{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{"_meta":{"x":${deep}}}}`, -32602, 18, /^invalid_request: the JSON body is nested deeper than 32 levels \(at (body|line)\.params\._meta\.x/],
]

describe('a message unfaithful outside its params is -32600 Invalid Request, naming where; inside them -32602', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 5 })
  })
  after(() => world?.close())

  for (const [what, body, code, id, message] of CASES) {
    test(`raw HTTP: ${what}: 400, ${code}, id ${id}`, async () => {
      const response = await postMcpText(world, body)
      const answer = (await response.json()) as any
      assert.equal(response.status, 400, JSON.stringify(answer))
      assert.equal(answer.jsonrpc, '2.0')
      assert.equal(answer.id, id, JSON.stringify(answer))
      assert.equal(answer.error.code, code, JSON.stringify(answer))
      assert.match(answer.error.message, message)
      assert.equal(answer.error.data.error.code, 'invalid_request')
    })
  }

  test('raw HTTP: a batch names the message (its index) and answers with its id', async () => {
    const response = await postMcpText(world, '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list","method":"ping"}]')
    const answer = (await response.json()) as any
    assert.equal(response.status, 400)
    assert.equal(answer.error.code, -32600, JSON.stringify(answer))
    assert.equal(answer.id, 2)
    assert.match(answer.error.message, /key "method" appears twice in the top level of message \[1\]/)
  })

  test('stdio (a real `warrant mcp` subprocess): the same answers, line by line, and the session goes on', { timeout: 60_000 }, async () => {
    const session = await startMcpLineSession(world)
    try {
      for (const [what, body, code, id, message] of CASES) {
        session.send(body)
        // an answer with id null is found by sending a known request right after it: answers come in order
        session.send(JSON.stringify({ jsonrpc: '2.0', id: 900, method: 'ping' }))
        const answer = id === null ? await nullAnswer(session) : await session.answer(id)
        assert.equal(answer.error?.code, code, `${what}: ${JSON.stringify(answer)}`)
        assert.match(answer.error.message, message, what)
        assert.equal(answer.error.data?.error?.code, 'invalid_request', what)
        await session.answer(900)
        session.lines.splice(0)
      }
    } finally {
      await session.end()
    }
  })
})

async function nullAnswer(session: Awaited<ReturnType<typeof startMcpLineSession>>): Promise<any> {
  await session.answer(900)
  const found = session.lines.find((l: any) => l.id === null)
  assert.ok(found, `an answer with id null: ${JSON.stringify(session.lines)}`)
  return found
}
