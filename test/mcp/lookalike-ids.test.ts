import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { callTool, connectStdio, type McpWorld, startMcpWorld, text } from './support.js'

/**
 * The plan page named record ids drawn alike; the MCP summaries an agent relays to its person did not, so the agent
 * asked for approval of a change to "admin-l" without a word that "admin-I" is another record. The summaries of
 * create_selection, read_selection, propose_change and get_plan name them from the view's `lookalike_ids`.
 */
describe('MCP summaries name record ids drawn alike (warrant mcp subprocess, official client, odd http upstream)', () => {
  let upstream: OddUpstream
  let world: McpWorld
  let token: string
  before(async () => {
    const ordinary = Array.from({ length: 300 }, (_, i) => `user-${String(i).padStart(6, '0')}`)
    upstream = await startOddUpstream(['admin-I', 'admin-l', 'user-10', ...ordinary].map((id) => ({ id, name: `name of ${id}`, status: 'open', note: 'n' })))
    world = await startMcpWorld({ count: 20, edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    token = (await world.fx.gateway.principals.issue({ name: 'things-mcp-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
  })
  after(async () => {
    await world?.close()
    await upstream?.close()
  })

  test('selection and plan summaries name each group with code points, and the word drawn like a target', { timeout: 120_000 }, async () => {
    const { client } = await connectStdio(world, token)
    try {
      const created = await callTool(client, 'create_selection', { resource: 'things', filter: { id: { in: ['admin-I', 'admin-l', 'user-10'] } } })
      assert.ok(!created.isError, text(created))
      assert.equal(created.structuredContent.lookalike_ids.groups.length, 1)
      for (const said of [text(created), text(await callTool(client, 'read_selection', { selection_id: created.structuredContent.selection_id }))]) {
        assert.match(said, /LOOK-ALIKE IDS/, said)
        assert.match(said, /"admin-I" \(U\+0049\) and "admin-l" \(U\+006C\)/, said)
      }
      const proposed = await callTool(client, 'propose_change', { selection_id: created.structuredContent.selection_id, action: { type: 'set_status', params: { status: 'archived as user-1O' } } })
      assert.ok(!proposed.isError, text(proposed))
      assert.deepEqual(proposed.structuredContent.lookalike_ids.named, [{ word: 'user-1O', word_code_points: ['U+004F'], id: 'user-10', id_code_points: ['U+0030'] }])
      for (const said of [text(proposed), text(await callTool(client, 'get_plan', { plan_id: proposed.structuredContent.plan_id }))]) {
        assert.match(said, /"admin-I" \(U\+0049\) and "admin-l" \(U\+006C\)/, said)
        assert.match(said, /"user-1O" \(U\+004F\) .*record id "user-10" \(U\+0030\)/, said)
      }
    } finally {
      await client.close()
    }
  })

  test('ordinary ids give no such sentence', { timeout: 120_000 }, async () => {
    const { client } = await connectStdio(world, token)
    try {
      const created = await callTool(client, 'create_selection', { resource: 'things', filter: { id: { gte: 'user-0', lt: 'user-1' } } })
      assert.equal(created.structuredContent.count, 300)
      assert.doesNotMatch(text(created), /LOOK-ALIKE/)
      const proposed = await callTool(client, 'propose_change', { selection_id: created.structuredContent.selection_id, action: { type: 'set_status', params: { status: 'user-000123 closed' } } })
      assert.doesNotMatch(text(proposed), /LOOK-ALIKE/)
    } finally {
      await client.close()
    }
  })
})
