import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { MAX_FILTER_VALUE_CHARS } from '../../src/contract/index.js'
import { assertRefused, callTool, connectAgent, type McpWorld, startMcpWorld } from '../mcp/support.js'

/**
 * A filter value has a length cap: no field a filter compares holds a megabyte, and such a value went upstream
 * whole (in an http upstream's query string, a SQL parameter) on every page of the walk. Over the cap, on search and
 * selections, HTTP and MCP, is `invalid_request` naming the filter field and the cap; nothing is made. At the cap
 * it is served. Before: a 1 MB value was accepted and walked.
 */
describe('a filter value longer than the cap is refused naming the field', () => {
  let world: McpWorld
  let client: Client
  before(async () => {
    world = await startMcpWorld({ count: 50 })
    client = await connectAgent(world, 'filter-value-length')
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  const long = 'x'.repeat(1024 * 1024)
  const filters = [
    [{ customer_name: long }, /filter\.customer_name: .*at most \d+ characters/],
    [{ customer_name: { in: ['a', long] } }, /filter\.customer_name\.in\.1: .*at most \d+ characters/],
    [{ tags: { contains: long } }, /filter\.tags\.contains: .*at most \d+ characters/],
  ] as const

  test('HTTP search and selections: 400 naming the field; nothing is made; a value at the cap is served', async () => {
    const agent = world.fx.as('agent')
    const db = world.fx.gateway.store.db
    const count = async () => Number((await db.selectFrom('selections').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
    const before = await count()
    for (const [filter, names] of filters)
      for (const path of ['/v1/resources/subscriptions/search', '/v1/resources/subscriptions/selections']) {
        const response = await agent('POST', path, { filter })
        assert.equal(response.status, 400, `${path}: ${JSON.stringify(response.body).slice(0, 300)}`)
        assert.equal(response.body.error.code, 'invalid_request')
        assert.match(response.body.error.message, names)
      }
    assert.equal(await count(), before)
    const atCap = await agent('POST', '/v1/resources/subscriptions/search', { filter: { customer_name: 'y'.repeat(MAX_FILTER_VALUE_CHARS) } })
    assert.equal(atCap.status, 200, JSON.stringify(atCap.body).slice(0, 300))
    assert.equal(atCap.body.complete, true)
  })

  test('MCP search and create_selection: an isError result naming the field', { timeout: 60_000 }, async () => {
    for (const [filter, names] of filters)
      for (const tool of ['search', 'create_selection']) {
        const result = await callTool(client, tool, { resource: 'subscriptions', filter })
        assertRefused(result, 'invalid_request')
        assert.match(result.structuredContent.error.message, names)
      }
  })
})
