import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { duplicateKeyOf } from '../../src/contract/index.js'
import { postMcpText, startMcpLineSession, startMcpWorld, type McpWorld } from '../mcp/support.js'

describe('a filter key given twice is refused on HTTP and MCP, as on the CLI', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 600 })
  })
  after(async () => {
    await world?.close()
  })

  test('duplicateKeyOf finds the first repeated key with its path, in any nesting, and nothing in clean JSON', () => {
    assert.deepEqual(duplicateKeyOf('{"filter":{"status":"a","status":"b"}}'), { path: 'filter', key: 'status' })
    assert.deepEqual(duplicateKeyOf('{"exclude":[{"rule":"x","filter":{"tags":{"contains":"a","contains":"b"}}}]}'), { path: 'exclude.0.filter.tags', key: 'contains' })
    assert.deepEqual(duplicateKeyOf('{"a":"x\\"y","b":[1,{"c":null,"d":true}],"a":2}'), { path: '', key: 'a' })
    assert.equal(duplicateKeyOf('{"a":{"b":1},"b":{"a":"\\u0061"},"c":[{"a":1},{"a":2}]}'), null)
  })

  test('HTTP search: two conditions on one field is a 400 naming the key, and an unknown operator is a 400 listing the operators', async () => {
    const agent = world.fx.as('agent')
    const twice = await agent('POST', '/v1/resources/subscriptions/search', '{"filter": {"status": "past_due", "status": "active"}}')
    assert.equal(twice.status, 400, JSON.stringify(twice.body))
    assert.equal(twice.body.error.code, 'invalid_request')
    assert.match(twice.body.error.message, /key "status" appears twice in "filter"/)
    const selection = await agent('POST', '/v1/resources/subscriptions/selections', '{"filter": {"amount_due": {"gte": 10, "gte": 500}}}')
    assert.equal(selection.status, 400)
    assert.match(selection.body.error.message, /key "gte" appears twice in "filter.amount_due"/)
    const typo = await agent('POST', '/v1/resources/subscriptions/search', { filter: { status: { eqq: 'past_due' } } })
    assert.equal(typo.status, 400)
    assert.match(typo.body.error.message, /eq, in, not_in, lt, lte, gt, gte, is_null, contains/)
    const fine = await agent('POST', '/v1/resources/subscriptions/search', '{"filter": {"amount_due": {"gte": 100, "lt": 300}}}')
    assert.equal(fine.status, 200)
    assert.ok(fine.body.items.every((i: any) => i.amount_due >= 100 && i.amount_due < 300))
  })

  test('MCP over HTTP answers an isError result naming the key (invalid tool input, as every other); the search never runs', async () => {
    const response = await postMcpText(world, '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"resource":"subscriptions","filter":{"status":"past_due","status":"active"}}}}')
    assert.equal(response.status, 200)
    const body = (await response.json()) as any
    assert.equal(body.id, 7)
    assert.equal(body.result.isError, true)
    assert.equal(body.result.structuredContent.error.code, 'invalid_request')
    assert.match(body.result.structuredContent.error.message, /key "status" appears twice in arguments\.filter/)
  })

  test('MCP over stdio answers the same refusal for that message and keeps serving the next one', { timeout: 60_000 }, async () => {
    const { send, answer, end } = await startMcpLineSession(world)
    try {
    send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"resource":"subscriptions","filter":{"status":"past_due","status":"active"}}}}')
    const refused = await answer(2)
    assert.equal(refused.result?.isError, true, JSON.stringify(refused))
    assert.match(refused.result.structuredContent.error.message, /key "status" appears twice in arguments\.filter/)
    send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', filter: { status: 'active' }, budget: { max_pages: 1 } } } }))
    const served = await answer(3)
    assert.ok(served.result.structuredContent.items.every((i: any) => i.status === 'active'))
    } finally {
      await end()
    }
  })
})
