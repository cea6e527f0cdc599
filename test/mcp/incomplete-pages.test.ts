import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type McpWorld, assertAnswered, assertSameAsHttp, callTool, startMcpWorld, text, connectAgent } from './support.js'

/**
 * A page of an incomplete selection's members (or of the records a rule excluded) is only part of what the
 * filter matches: the page says so, in its data and first in its text. Before: `LAST PAGE: 5 records of the 5
 * members …; nothing follows`, with no completeness anywhere in the page, so an agent paging through the
 * members read a cut-short inventory as every matching record.
 */
describe('member and excluded pages carry their selection\'s completeness', () => {
  let world: McpWorld
  let client: Client
  before(async () => {
    world = await startMcpWorld({ count: 300 })
    client = await connectAgent(world, 'pages-test')
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  const asAgent = (path: string) => fetch(`${world.fx.base}${path}`, { headers: { authorization: `Bearer ${world.agentToken}` } }).then((r) => r.json() as Promise<any>)
  const request = { resource: 'subscriptions', filter: { status: 'past_due' }, exclude: [{ rule: 'disputed', filter: { tags: { contains: 'disputed' } } }] }

  test('an incomplete selection: every page is complete: false with the reasons, and its text opens INCOMPLETE', async () => {
    const selection = assertAnswered(await callTool(client, 'create_selection', { ...request, budget: { max_items: 12 } }))
    assert.equal(selection.complete, false)
    assert.ok(selection.exclusions[0].count > 0, 'the walk met a disputed record')
    for (const args of [{ part: 'records', limit: 100 }, { part: 'records', limit: 2 }, { part: 'excluded', rule: 'disputed' }]) {
      const result = await callTool(client, 'read_selection', { selection_id: selection.selection_id, ...args })
      const page = assertAnswered(result)
      assert.equal(page.complete, false, JSON.stringify(args))
      assert.deepEqual(page.incomplete_reasons, selection.incomplete_reasons)
      assert.match(text(result), /^INCOMPLETE \(CLIENT_LIMIT_REACHED: max_items=12\)/)
      assert.match(text(result), /not every record the filter matches/)
      const path = args.part === 'records' ? `records?limit=${args.limit}` : 'excluded?rule=disputed'
      assertSameAsHttp(page, await asAgent(`/v1/selections/${selection.selection_id}/${path}`))
    }
  })

  test("a plan's per-record changes on an incomplete selection: complete: false with the reasons, and its text opens INCOMPLETE", async () => {
    const selection = assertAnswered(await callTool(client, 'create_selection', { ...request, budget: { max_items: 12 } }))
    const plan = assertAnswered(await callTool(client, 'propose_change', { selection_id: selection.selection_id, action: { type: 'pause_collection', params: { reason: 'pages' } } }))
    const result = await callTool(client, 'get_plan', { plan_id: plan.plan_id, part: 'changes' })
    const page = assertAnswered(result)
    assert.equal(page.complete, false)
    assert.deepEqual(page.incomplete_reasons, selection.incomplete_reasons)
    assert.match(text(result), /^INCOMPLETE \(CLIENT_LIMIT_REACHED: max_items=12\) selection: LAST PAGE/)
    assert.match(text(result), /never be approved or committed/)
    assertSameAsHttp(page, await asAgent(`/v1/plans/${plan.plan_id}/changes`))
    const complete = assertAnswered(await callTool(client, 'create_selection', request))
    const completePlan = assertAnswered(await callTool(client, 'propose_change', { selection_id: complete.selection_id, action: { type: 'pause_collection', params: { reason: 'pages' } } }))
    const completePage = await callTool(client, 'get_plan', { plan_id: completePlan.plan_id, part: 'changes' })
    assert.equal(assertAnswered(completePage).complete, true)
    assert.match(text(completePage), /^COMPLETE selection: (LAST PAGE|MORE PAGES)/)
  })

  test('a complete selection: its pages say complete: true', async () => {
    const selection = assertAnswered(await callTool(client, 'create_selection', request))
    assert.equal(selection.complete, true)
    for (const args of [{ part: 'records' }, { part: 'excluded', rule: 'disputed' }]) {
      const result = await callTool(client, 'read_selection', { selection_id: selection.selection_id, ...args })
      const page = assertAnswered(result)
      assert.equal(page.complete, true)
      assert.deepEqual(page.incomplete_reasons, [])
      assert.match(text(result), /^COMPLETE selection: (LAST PAGE|MORE PAGES)/)
    }
  })
})
