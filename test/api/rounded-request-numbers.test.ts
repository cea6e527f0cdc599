import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { roundedLiteralOf } from '../../src/contract/index.js'
import { connectAgent, type McpWorld, postMcpText, startMcpLineSession, startMcpWorld } from '../mcp/support.js'

/**
 * A request's JSON is parsed into doubles: 9007199254740993 is read as 9007199254740992, 1e400 as Infinity. A
 * `number` action parameter sent as 2^53 + 1 used to be proposed, reviewed and written as 2^53 — a value nobody
 * sent. Every surface that takes JSON (HTTP /v1 bodies, MCP over HTTP and stdio) refuses a body holding a number
 * literal a double does not hold exactly, with 400 naming where it is; nothing is created.
 */
describe('a request number JSON would round is refused on every surface, nothing created', () => {
  let world: McpWorld
  let selectionId: string
  const plansOf = async (selection: string) => (await world.fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selection).execute()).length
  const selectionsCount = async () => (await world.fx.gateway.store.db.selectFrom('selections').select('id').execute()).length
  before(async () => {
    world = await startMcpWorld({
      count: 300,
      edit: (config) => {
        config.resources.subscriptions.actions.set_amount = { description: 'set the amount due', params: { amount: { type: 'number' } }, set: { amount_due: '{{params.amount}}' } }
      },
    })
    const sel = await world.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'trialing' } })
    assert.equal(sel.status, 201, JSON.stringify(sel.body))
    selectionId = sel.body.selection_id
  })
  after(async () => {
    await world?.close()
  })

  test('roundedLiteralOf names the first literal a double does not hold, with its path; exact literals and strings pass', () => {
    assert.deepEqual(roundedLiteralOf('{"action":{"params":{"amount":9007199254740993}}}'), { path: 'action.params.amount', literal: '9007199254740993', read_as: '9007199254740992' })
    assert.deepEqual(roundedLiteralOf('{"a":[1,{"b":0.12345678901234567890}]}'), { path: 'a.1.b', literal: '0.12345678901234567890', read_as: '0.12345678901234568' })
    assert.deepEqual(roundedLiteralOf('{"x":1e400}'), { path: 'x', literal: '1e400', read_as: 'Infinity' })
    assert.deepEqual(roundedLiteralOf('{"x":-1e-400}'), { path: 'x', literal: '-1e-400', read_as: '0' })
    assert.equal(roundedLiteralOf('{"a":9007199254740992,"b":"9007199254740993","c":0.1,"d":1.5e300,"e":12345678901234567e3,"f":-0,"g":1.0000000000000000}'), null)
  })

  test('HTTP proposal: a number parameter 2^53 + 1 is a 400 naming the path, and no plan is stored', async () => {
    const agent = world.fx.as('agent')
    const before = await plansOf(selectionId)
    const plan = await agent('POST', `/v1/selections/${selectionId}/plans`, '{"action":{"type":"set_amount","params":{"amount":9007199254740993}}}')
    assert.equal(plan.status, 400, `the plan would write ${JSON.stringify(plan.body.changes?.summary)}`)
    assert.equal(plan.body.error.code, 'invalid_request')
    assert.match(plan.body.error.message, /the number 9007199254740993 at "action\.params\.amount" .*read as 9007199254740992/)
    assert.deepEqual(plan.body.error.details, { path: 'action.params.amount', literal: '9007199254740993', read_as: '9007199254740992' })
    assert.equal(await plansOf(selectionId), before, 'no plan row is stored')
    // the largest exact neighbour is proposed as written
    const exact = await agent('POST', `/v1/selections/${selectionId}/plans`, '{"action":{"type":"set_amount","params":{"amount":9007199254740992}}}')
    assert.equal(exact.status, 201, JSON.stringify(exact.body))
    assert.equal(exact.body.changes.summary.find((s: any) => s.field === 'amount_due').after, 9007199254740992)
  })

  test('HTTP selection filter and search: more digits than a double holds, or out of range, is a 400; no selection created', async () => {
    const agent = world.fx.as('agent')
    const count = await selectionsCount()
    for (const [body, path] of [
      ['{"filter":{"amount_due":{"gte":100.00000000000000001}}}', 'filter.amount_due.gte'],
      ['{"filter":{"amount_due":{"in":[1,2,1e999]}}}', 'filter.amount_due.in.2'],
    ] as const) {
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', body)
      assert.equal(selection.status, 400, `${body}: ${JSON.stringify(selection.body)}`)
      assert.equal(selection.body.error.details.path, path)
      const search = await agent('POST', '/v1/resources/subscriptions/search', body)
      assert.equal(search.status, 400, `${body}: ${JSON.stringify(search.body)}`)
    }
    assert.equal(await selectionsCount(), count, 'no selection is stored')
    const exact = await agent('POST', '/v1/resources/subscriptions/search', '{"filter":{"amount_due":{"gte":100.5,"lt":9007199254740992}}}')
    assert.equal(exact.status, 200, JSON.stringify(exact.body))
  })

  test('HTTP commit: a rounded number in the body is a 400 before anything runs', async () => {
    const commit = await world.fx.as('agent')('POST', '/v1/plans/pln_none/commit', '{"expected_digest":"sha256:x","budget":18446744073709551617}', { 'idempotency-key': 'rounded-commit' })
    assert.equal(commit.status, 400, JSON.stringify(commit.body))
    assert.equal(commit.body.error.details.path, 'budget')
  })

  test('MCP over HTTP: a rounded number in tool arguments is an isError result naming the argument (invalid input, as every other); nothing is made', async () => {
    const count = await selectionsCount()
    const response = await postMcpText(world, '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"create_selection","arguments":{"resource":"subscriptions","filter":{"amount_due":{"gte":9007199254740993}}}}}')
    assert.equal(response.status, 200)
    const body = (await response.json()) as any
    assert.equal(body.id, 9)
    assert.equal(body.result.isError, true)
    assert.equal(body.result.structuredContent.error.code, 'invalid_request')
    assert.match(body.result.structuredContent.error.message, /the number 9007199254740993 at arguments\.filter\.amount_due\.gte/)
    assert.equal(await selectionsCount(), count)
    // an exact request through the SDK client is served as before
    const client = await connectAgent(world, 'rounded')
    try {
      const served: any = await client.callTool({ name: 'search', arguments: { resource: 'subscriptions', filter: { amount_due: { gte: 9007199254740992 } }, budget: { max_pages: 1 } } })
      assert.notEqual(served.isError, true, JSON.stringify(served))
    } finally {
      await client.close()
    }
  })

  test('MCP over stdio: the same refusal for that line, and the next message is served', { timeout: 60_000 }, async () => {
    const { send, answer, end } = await startMcpLineSession(world)
    try {
      const count = await plansOf(selectionId)
      send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"propose_change","arguments":{"selection_id":"${selectionId}","action":{"type":"pause_collection","params":{"reason":"x","n":12345678901234567890}}}}}`)
      const refused = await answer(2)
      assert.equal(refused.result?.isError, true, JSON.stringify(refused))
      assert.match(refused.result.structuredContent.error.message, /the number 12345678901234567890 at arguments\.action\.params\.n/)
      assert.equal(await plansOf(selectionId), count, 'no plan is stored')
      send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions', filter: { status: 'active' }, budget: { max_pages: 1 } } } }))
      const served = await answer(3)
      assert.ok(served.result.structuredContent.items.every((i: any) => i.status === 'active'))
    } finally {
      await end()
    }
  })
})
