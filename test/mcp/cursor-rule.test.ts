import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { assertRefused, callTool, connectAgent, type McpWorld, startMcpWorld } from './support.js'

/**
 * One rule for `cursor` on every paged read, over HTTP and MCP: it is a cursor an earlier answer gave, or it is left
 * out (the first part or page). `null` and `""` are neither: each is refused naming `cursor`, saying to leave it out
 * to start and that a null next_cursor means nothing follows. Before: search took `cursor: null` as "from the start"
 * while read_selection refused it; read_selection, get_plan and get_operation took `cursor: ""` (and `?cursor=` over
 * HTTP) as the first page again, while search refused it as an empty cursor; an agent passing on a last page's
 * `next_cursor: null` (or its text form, "") got the first page again and looped.
 */
describe('cursor: null or "" is refused naming cursor, on search and every page, over HTTP and MCP', () => {
  let world: McpWorld
  let client: Client
  let selectionId: string
  let planId: string
  before(async () => {
    world = await startMcpWorld({ count: 100 })
    client = await connectAgent(world, 'cursor-rule')
    selectionId = (await callTool(client, 'create_selection', { resource: 'subscriptions', filter: { status: 'past_due' } })).structuredContent.selection_id
    planId = (await callTool(client, 'propose_change', { selection_id: selectionId, action: { type: 'pause_collection', params: { reason: 'x' } } })).structuredContent.plan_id
  })
  after(async () => {
    await client?.close()
    await world?.close()
  })

  const rule = /cursor: .*leave cursor out to start/

  test('MCP: every tool that takes a cursor refuses null and "" alike', { timeout: 60_000 }, async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['search', { resource: 'subscriptions' }],
      ['read_selection', { selection_id: selectionId, part: 'records' }],
      ['read_selection', { selection_id: selectionId, part: 'excluded', rule: 'none' }],
      ['get_plan', { plan_id: planId, part: 'changes' }],
      ['get_operation', { operation_id: 'op_x', part: 'results' }],
    ]
    for (const [tool, args] of calls)
      for (const cursor of [null, '']) {
        const result = await callTool(client, tool, { ...args, cursor })
        assertRefused(result, 'invalid_request')
        assert.match(result.structuredContent.error.message, rule, `${tool} cursor ${JSON.stringify(cursor)}`)
      }
  })

  test('HTTP: a search body with cursor null or "", and ?cursor= on every page, are 400 naming cursor', async () => {
    const agent = world.fx.as('agent')
    for (const cursor of [null, '']) {
      const search = await agent('POST', '/v1/resources/subscriptions/search', { filter: {}, cursor })
      assert.equal(search.status, 400, JSON.stringify(search.body).slice(0, 300))
      assert.match(search.body.error.message, rule)
    }
    for (const path of [`/v1/selections/${selectionId}/records?cursor=`, `/v1/selections/${selectionId}/excluded?rule=none&cursor=`, `/v1/plans/${planId}/changes?cursor=`, '/v1/operations/op_x/results?cursor=']) {
      const page = await agent('GET', path)
      assert.equal(page.status, 400, `${path}: ${JSON.stringify(page.body).slice(0, 300)}`)
      assert.match(page.body.error.message, rule, path)
    }
    // left out, each starts from the beginning as before
    assert.equal((await agent('POST', '/v1/resources/subscriptions/search', { filter: {}, budget: { max_pages: 1 } })).status, 200)
    assert.equal((await agent('GET', `/v1/selections/${selectionId}/records`)).status, 200)
  })
})
