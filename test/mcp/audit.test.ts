import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type McpWorld, callTool, startMcpWorld } from './support.js'

/**
 * Every MCP tool call leaves one run-level audit row (surface `mcp`, action `mcp:<tool>`) with its outcome:
 * `ok`, or the refusal's code. The calls below mix answers and refusals; the rows are read straight from the
 * store, so a removed audit call leaves the count short.
 */
describe('every MCP tool call is audited, answered or refused', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 300 })
  })
  after(async () => {
    await world?.close()
  })

  test('one audit row per call, in order, naming the tool, the principal, the outcome and the ids it touched', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${world.agentToken}` } } })
    const client = new Client({ name: 'warrant-audit-test', version: '1.0.0' })
    await client.connect(transport)
    const db = world.fx.gateway.store.db
    const before = (await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0
    // [tool, arguments, outcome, the ids its row must carry: selection, plan, operation]
    type Expected = [string, Record<string, unknown>, string, [string | null, string | null, string | null]]
    const made: Expected[] = []
    const call = async (name: string, args: Record<string, unknown>, outcome: string, ids: (answer: any) => Expected[3]) => {
      const result = await callTool(client, name, args)
      assert.equal(result.isError === true, outcome !== 'ok', `${name}: ${JSON.stringify(result.structuredContent).slice(0, 300)}`)
      made.push([name, args, outcome, ids(result.structuredContent)])
      return result.structuredContent
    }
    const none = (): Expected[3] => [null, null, null]
    try {
      await call('list_resources', {}, 'ok', none)
      await call('search', { resource: 'archive', filter: {} }, 'forbidden', none)
      await call('get_plan', { plan_id: 'plan_does_not_exist' }, 'not_found', () => [null, 'plan_does_not_exist', null])
      await call('commit_change', { plan_id: 'plan_does_not_exist', idempotency_key: 'k-audit' }, 'invalid_request', () => [null, 'plan_does_not_exist', null])
      await call('search', { resource: 'subscriptions', filter: { status: 'past_due' }, budget: { max_items: 5 } }, 'ok', none)
      // the selection id comes from the answer: the arguments name none
      const created = await call('create_selection', { resource: 'subscriptions', filter: { status: 'past_due' } }, 'ok', (answer) => [answer.selection_id, null, null])
      assert.match(created.selection_id, /\S/)
      await call('read_selection', { selection_id: created.selection_id }, 'ok', () => [created.selection_id, null, null])
      await call('get_operation', { operation_id: 'op_does_not_exist' }, 'not_found', () => [null, null, 'op_does_not_exist'])
      // an id that is not a string is refused, and is not put on the row as one
      await call('read_selection', { selection_id: 42 }, 'invalid_request', none)
    } finally {
      await client.close()
    }
    const principal = (await world.fx.gateway.principals.authenticate(world.agentToken, 'mcp')).principal
    const rows = await db
      .selectFrom('audit_events')
      .select(['action', 'principal', 'surface', 'summary', 'selection_id', 'plan_id', 'operation_id'])
      .where('seq', '>', Number(before))
      .where('action', 'like', 'mcp:%')
      .orderBy('seq')
      .execute()
    assert.deepEqual(
      rows.map((r) => {
        const summary = JSON.parse(r.summary)
        return [r.action, r.principal, r.surface, summary.outcome === 'refused' ? summary.error : summary.outcome, [r.selection_id, r.plan_id, r.operation_id]]
      }),
      made.map(([name, , outcome, ids]) => [`mcp:${name}`, principal, 'mcp', outcome, ids]),
    )
    // a refusal is recorded as such, with its code; an answer as ok, with no error
    const summaries = rows.map((r) => JSON.parse(r.summary))
    assert.deepEqual(Object.keys(summaries[0]).sort(), ['arguments', 'outcome'])
    assert.deepEqual([summaries[1].outcome, summaries[1].error], ['refused', 'forbidden'])
    assert.deepEqual(summaries[2].arguments, { plan_id: 'plan_does_not_exist' }, 'the arguments are summarised on the row')
  })
})
