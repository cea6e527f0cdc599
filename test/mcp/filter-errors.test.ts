import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type McpWorld, assertRefused, callTool, startMcpWorld, connectAgent } from './support.js'

/**
 * A filter condition is a value or an object of operators (a union): when it is wrong, the refusal says what is
 * wrong with it, not zod's bare "Invalid input". Before: `filter.id: Invalid input` for an `in` list of 10,001
 * ids (the recovery the refusal text itself suggests, on a large selection), for `gte: [1]`, `contains: 5` or a
 * bare list, with nothing saying which operator or what was expected.
 */
describe('a wrong filter condition is refused saying what is wrong with it', () => {
  let world: McpWorld
  let client: Client
  before(async () => {
    world = await startMcpWorld({ count: 50 })
    client = await connectAgent(world, 'filter-errors-test')
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  test('search and create_selection name the operator and the problem; HTTP says the same', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ id: { in: Array.from({ length: 10_001 }, (_, i) => `sub_${i}`) } }, 'filter.id.in', /10000/],
      [{ amount_due: { gte: [1] } }, 'filter.amount_due.gte', /expected string, number or boolean, received array/],
      [{ tags: { contains: 5 } }, 'filter.tags.contains', /expected string, received number/],
      [{ id: ['sub_1', 'sub_2'] }, 'filter.id', /expected string, number, boolean or object, received array/],
    ]
    for (const [filter, path, message] of cases) {
      for (const tool of ['search', 'create_selection']) {
        const result = await callTool(client, tool, { resource: 'subscriptions', filter })
        assertRefused(result, 'invalid_request')
        assert.deepEqual(result.structuredContent.error.details.problems.map((p: any) => p.path), [path], `${tool} ${JSON.stringify(filter).slice(0, 80)}`)
        assert.match(result.structuredContent.error.details.problems[0].message, message)
        assert.doesNotMatch(result.structuredContent.error.message, /: Invalid input(;|$)/)
      }
      const http = await world.fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter })
      assert.equal(http.status, 400)
      assert.deepEqual(http.body.error.details.problems.map((p: any) => p.path), [path])
    }
  })
})
