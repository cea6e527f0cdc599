import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type McpWorld, assertAnswered, assertRefused, callTool, startMcpWorld, connectAgent } from './support.js'

/**
 * An argument that only pages (cursor, limit, rule, outcome) given with the overview, or a wait given with a
 * page of results, is refused naming it and the part it belongs to. Before: it was silently ignored, so
 * read_selection {selection_id, cursor: next_cursor} answered the overview's first page again and again (even an
 * invented cursor passed), and get_operation {outcome: "failed"} answered the overview.
 */
describe('an argument the chosen part does not use is refused, never ignored', () => {
  let world: McpWorld
  let client: Client
  before(async () => {
    world = await startMcpWorld({ count: 300 })
    client = await connectAgent(world, 'part-test')
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  test('read_selection, get_plan and get_operation name the argument and the part it needs', async () => {
    const selection = assertAnswered(await callTool(client, 'create_selection', { resource: 'subscriptions', filter: {} }))
    assert.ok(selection.next_cursor, 'the overview shows a first page and a cursor')
    const id = selection.selection_id
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['read_selection', { selection_id: id, cursor: selection.next_cursor }, 'cursor', /part "records"/],
      ['read_selection', { selection_id: id, cursor: 'invented' }, 'cursor', /part "records"/],
      ['read_selection', { selection_id: id, limit: 10 }, 'limit', /part "records"/],
      ['read_selection', { selection_id: id, part: 'records', rule: 'disputed' }, 'rule', /part "excluded"/],
      ['get_plan', { plan_id: 'plan_x', cursor: 'c' }, 'cursor', /part "changes"/],
      ['get_plan', { plan_id: 'plan_x', limit: 5 }, 'limit', /part "changes"/],
      ['get_operation', { operation_id: 'op_x', outcome: 'failed' }, 'outcome', /part "results"/],
      ['get_operation', { operation_id: 'op_x', cursor: 'c' }, 'cursor', /part "results"/],
      ['get_operation', { operation_id: 'op_x', part: 'results', wait_ms: 1000 }, 'wait_ms', /part "overview"/],
    ]
    for (const [tool, args, field, part] of cases) {
      const result = await callTool(client, tool, args)
      assertRefused(result, 'invalid_request')
      assert.deepEqual(result.structuredContent.error.details.problems.map((p: any) => p.path), [field], `${tool} ${JSON.stringify(args)}`)
      assert.match(result.structuredContent.error.message, part)
    }
    // what each part uses is still accepted
    const page = assertAnswered(await callTool(client, 'read_selection', { selection_id: id, part: 'records', cursor: selection.next_cursor, limit: 10 }))
    assert.equal(page.records[0].ord, selection.records.length + 1)
    assert.equal(page.records.length, 10)
  })
})
