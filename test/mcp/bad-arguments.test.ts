import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { assertRefused, callTool, connectAgent, connectStdio, type McpWorld, startMcpWorld } from './support.js'

/**
 * Arguments an agent gets wrong (wrong types, numbers as strings, huge strings, unknown keys, null for an optional
 * argument, negative or zero page sizes, a cursor another tool or list issued) are each an `isError` result naming
 * the argument, never an exception, a hang or a 500; and they change nothing: no selection or plan is made, and
 * the call's audit row says refused. A cursor of another kind says what kind it is and where the right one comes
 * from (before: a selection's page cursor given to search was "not valid base64url: it was altered or truncated",
 * and a search continuation given to read_selection or get_plan "belongs to another query: resource, environment,
 * filter or fields differ", as if the agent had edited one).
 */
describe('bad tool arguments: an isError result naming the argument, and nothing changes', () => {
  let world: McpWorld
  let client: Client
  let selectionId: string
  let pageCursor: string
  let searchCursor: string
  let planId: string
  let changesCursor: string
  before(async () => {
    world = await startMcpWorld({ count: 300 })
    client = await connectAgent(world, 'bad-arguments')
    const selection = (await callTool(client, 'create_selection', { resource: 'subscriptions', filter: { status: 'past_due' } })).structuredContent
    selectionId = selection.selection_id
    pageCursor = (await callTool(client, 'read_selection', { selection_id: selectionId, part: 'records', limit: 2 })).structuredContent.next_cursor
    searchCursor = (await callTool(client, 'search', { resource: 'subscriptions', filter: {}, page_size: 10, budget: { max_pages: 1 } })).structuredContent.continuation.cursor
    const plan = (await callTool(client, 'propose_change', { selection_id: selectionId, action: { type: 'pause_collection', params: { reason: 'x' } } })).structuredContent
    planId = plan.plan_id
    changesCursor = (await callTool(client, 'get_plan', { plan_id: planId, part: 'changes', limit: 2 })).structuredContent.next_cursor
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  const big = 'x'.repeat(100_000)
  /** [tool, arguments, code, what the message must name] */
  const cases = (): (readonly [string, Record<string, unknown>, string, RegExp])[] => [
    ['search', { resource: 123 }, 'invalid_request', /resource: .*expected string/],
    ['search', { resource: 'subscriptions', page_size: '10' }, 'invalid_request', /page_size: .*expected number, received string/],
    ['search', { resource: 'subscriptions', page_size: -5 }, 'invalid_request', /page_size: Too small/],
    ['search', { resource: 'subscriptions', page_size: 0 }, 'invalid_request', /page_size: Too small/],
    ['search', { resource: 'subscriptions', budget: { max_items: -1 } }, 'invalid_request', /budget\.max_items: Too small/],
    ['search', { resource: 'subscriptions', budget: null }, 'invalid_request', /budget: .*received null/],
    ['search', { resource: 'subscriptions', filter: null }, 'invalid_request', /filter: .*received null/],
    ['search', { resource: 'subscriptions', bogus: 1 }, 'invalid_request', /Unrecognized key: "bogus"/],
    ['search', { resource: big }, 'invalid_request', /resource: Too big/],
    ['search', { resource: 'subscriptions', cursor: big }, 'invalid_request', /cursor: Too big/],
    ['search', { resource: 'subscriptions', cursor: pageCursor }, 'invalid_cursor', /a page cursor of a frozen list .*not a search's continuation/],
    ['search', { resource: 'subscriptions', cursor: changesCursor }, 'invalid_cursor', /a page cursor of a frozen list .*not a search's continuation/],
    ['create_selection', { resource: 'subscriptions', filter: {}, idempotency_key: null }, 'invalid_request', /idempotency_key: .*received null/],
    ['create_selection', { resource: 'subscriptions', filter: {}, page_size: -1 }, 'invalid_request', /page_size: Too small/],
    ['create_selection', { resource: 'subscriptions', filter: {}, budget: { max_items: '5' } }, 'invalid_request', /budget\.max_items: .*received string/],
    ['create_selection', { resource: 'subscriptions', filter: {}, cursor: searchCursor }, 'invalid_request', /Unrecognized key: "cursor"/],
    ['create_selection', { resource: 'subscriptions', filter: {}, exclude: [{ rule: 'a', filter: {} }, { rule: 'a', filter: {} }] }, 'invalid_request', /rule "a" is named twice/],
    ['read_selection', { selection_id: null }, 'invalid_request', /selection_id: .*received null/],
    ['read_selection', { selection_id: 'sel_x', part: 'records', limit: -1 }, 'invalid_request', /limit: Too small/],
    ['read_selection', { selection_id: 'sel_x', part: 'records', limit: '5' }, 'invalid_request', /limit: .*received string/],
    ['read_selection', { selection_id: 'sel_x', part: 'records', cursor: null }, 'invalid_request', /cursor: null is not a cursor: leave cursor out to start/],
    ['search', { resource: 'subscriptions', cursor: null }, 'invalid_request', /cursor: null is not a cursor: leave cursor out to start/],
    ['read_selection', { selection_id: 'SEL', part: 'records', cursor: 'SEARCH' }, 'invalid_cursor', /not a page cursor of this list: a search's continuation/],
    ['read_selection', { selection_id: 'SEL', part: 'records', cursor: 'CHANGES' }, 'invalid_cursor', /not issued for this list/],
    ['get_plan', { plan_id: 'PLAN', part: 'changes', cursor: 'SEARCH' }, 'invalid_cursor', /not a page cursor of this list: a search's continuation/],
    ['get_plan', { plan_id: 'PLAN', part: 'changes', limit: -3 }, 'invalid_request', /limit: Too small/],
    ['get_operation', { operation_id: 'op_x', wait_ms: '100' }, 'invalid_request', /wait_ms: .*received string/],
    ['get_operation', { operation_id: 'op_x', part: 'results', limit: -1 }, 'invalid_request', /limit: Too small/],
    ['propose_change', { selection_id: 'SEL', action: { type: 'pause_collection', params: null } }, 'invalid_request', /action\.params: .*received null/],
    ['propose_change', { selection_id: 'SEL', action: { type: 'pause_collection', params: { reason: 5 } } }, 'invalid_request', /reason \(expected string\)/],
    ['propose_change', { selection_id: 'SEL', action: { type: 'pause_collection', params: { reason: big } } }, 'invalid_request', /action\.params\.reason: Too big/],
    ['commit_change', { plan_id: 'PLAN', expected_digest: null, idempotency_key: 'k' }, 'invalid_request', /expected_digest: .*received null/],
    ['commit_change', { plan_id: 5, expected_digest: 'x', idempotency_key: 'k' }, 'invalid_request', /plan_id: .*received number/],
    ['propose_compensation', { operation_id: 'op_x', x: 1 }, 'invalid_request', /Unrecognized key: "x"/],
    ['propose_remainder', { operation_id: 'op_x', x: 1 }, 'invalid_request', /Unrecognized key: "x"/],
    // a fields list naming a field twice was taken (a selection froze it so); an empty name or id is named too
    ['search', { resource: 'subscriptions', fields: ['id', 'status', 'id'] }, 'invalid_request', /fields: field "id" is named twice/],
    ['create_selection', { resource: 'subscriptions', filter: {}, fields: ['status', 'status'] }, 'invalid_request', /fields: field "status" is named twice/],
    ['create_selection', { resource: 'subscriptions', filter: {}, fields: ['status', ''] }, 'invalid_request', /fields\.1: an empty field name names no field/],
    ['search', { resource: '' }, 'invalid_request', /resource: Too small/],
    ['read_selection', { selection_id: '' }, 'invalid_request', /selection_id: Too small/],
    ['get_plan', { plan_id: '' }, 'invalid_request', /plan_id: Too small/],
    ['get_operation', { operation_id: '' }, 'invalid_request', /operation_id: Too small/],
  ]
  /** The live ids and cursors put in place of their placeholders. */
  const fill = (args: Record<string, unknown>) =>
    JSON.parse(JSON.stringify(args).replace(/"SEL"/g, JSON.stringify(selectionId)).replace(/"PLAN"/g, JSON.stringify(planId)).replace(/"SEARCH"/g, JSON.stringify(searchCursor)).replace(/"CHANGES"/g, JSON.stringify(changesCursor)))

  const counts = async () => {
    const db = world.fx.gateway.store.db
    const n = async (table: 'selections' | 'plans') => Number((await db.selectFrom(table).select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
    return { selections: await n('selections'), plans: await n('plans') }
  }

  for (const surface of ['HTTP', 'stdio'] as const) {
    test(`over ${surface}: each is refused naming the argument, and nothing is made; each row says refused`, { timeout: 120_000 }, async () => {
      const stdio = surface === 'stdio' ? await connectStdio(world, world.agentToken) : null
      const agent = stdio?.client ?? client
      try {
        const db = world.fx.gateway.store.db
        const since = Number((await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0)
        const before = await counts()
        for (const [tool, args, code, names] of cases()) {
          const started = Date.now()
          const result = await callTool(agent, tool, fill(args))
          assertRefused(result, code)
          assert.match(result.structuredContent.error.message, names, `${tool} ${JSON.stringify(args).slice(0, 120)}`)
          assert.ok(Date.now() - started < 10_000, `${tool}: answered at once`)
        }
        assert.deepEqual(await counts(), before, 'no selection or plan was made')
        await world.fx.gateway.audit.flush()
        const rows = await db.selectFrom('audit_events').select(['action', 'summary']).where('seq', '>', since).where('action', 'like', 'mcp:%').orderBy('seq').execute()
        assert.equal(rows.length, cases().length, 'one row per call')
        assert.ok(rows.every((r) => JSON.parse(r.summary).outcome === 'refused'), 'no row claims success')
        if (stdio) assert.deepEqual(stdio.errors, [])
      } finally {
        await stdio?.client.close()
      }
    })
  }
})
