import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { assertRefused, callTool, connectAgent, type McpWorld, runAgentFlow, startMcpWorld } from './support.js'

/**
 * An operation's results cursor (get_operation, part "results") handed to search, read_selection or get_plan was
 * "the cursor payload has an unknown shape or version"; a selection's or plan's page cursor handed to get_operation
 * was "invalid results cursor: altered or forged", and a search's continuation "it belongs to another operation or
 * outcome filter": the agent was told it had edited a cursor, or given one of another operation, when it had passed
 * another tool's cursor as given. Each now says what kind of cursor it is and which tool's cursor to use.
 */
describe('a cursor of another tool is refused naming what it is', () => {
  let world: McpWorld
  let client: Client
  let ids: { operation: string; plan: string; selection: string }
  let cursors: { results: string; records: string; changes: string; search: string }
  before(async () => {
    world = await startMcpWorld({ count: 2000 })
    client = await connectAgent(world, 'cursor-kinds')
    const flow = await runAgentFlow(client, world)
    ids = { operation: flow.operation.operation_id, plan: flow.plan.plan_id, selection: flow.selection.selection_id }
    cursors = {
      results: (await callTool(client, 'get_operation', { operation_id: ids.operation, part: 'results', limit: 2 })).structuredContent.next_cursor,
      records: (await callTool(client, 'read_selection', { selection_id: ids.selection, part: 'records', limit: 2 })).structuredContent.next_cursor,
      changes: (await callTool(client, 'get_plan', { plan_id: ids.plan, part: 'changes', limit: 2 })).structuredContent.next_cursor,
      search: (await callTool(client, 'search', { resource: 'subscriptions', filter: {}, page_size: 10, budget: { max_pages: 1 } })).structuredContent.continuation.cursor,
    }
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  test("an operation's results cursor given to search, read_selection or get_plan", { timeout: 60_000 }, async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['search', { resource: 'subscriptions', filter: {}, page_size: 10, budget: { max_pages: 1 }, cursor: cursors.results }],
      ['read_selection', { selection_id: ids.selection, part: 'records', cursor: cursors.results }],
      ['get_plan', { plan_id: ids.plan, part: 'changes', cursor: cursors.results }],
    ]
    for (const [tool, args] of calls) {
      const result = await callTool(client, tool, args)
      assertRefused(result, 'invalid_cursor')
      assert.match(result.structuredContent.error.message, /an operation's results cursor \(get_operation, part "results"\)/, tool)
    }
  })

  test('a page cursor of a selection or plan, or a search continuation, given to get_operation', { timeout: 60_000 }, async () => {
    const cases: [string, RegExp][] = [
      [cursors.records, /a page cursor of a frozen list/],
      [cursors.changes, /a page cursor of a frozen list/],
      [cursors.search, /a search's continuation/],
    ]
    for (const [cursor, kind] of cases) {
      const result = await callTool(client, 'get_operation', { operation_id: ids.operation, part: 'results', cursor })
      assertRefused(result, 'invalid_cursor')
      assert.match(result.structuredContent.error.message, kind)
      assert.match(result.structuredContent.error.message, /not a results cursor of an operation/)
      assert.doesNotMatch(result.structuredContent.error.message, /altered|forged|another operation/)
    }
  })

  test("the results cursor still pages its own operation's results", { timeout: 60_000 }, async () => {
    const next = await callTool(client, 'get_operation', { operation_id: ids.operation, part: 'results', limit: 2, cursor: cursors.results })
    assert.ok(!next.isError, JSON.stringify(next.structuredContent))
    assert.equal(next.structuredContent.results[0].ord, 3)
  })
})
