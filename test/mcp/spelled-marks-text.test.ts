import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { callTool, connectStdio, type McpWorld, startMcpWorld, text } from './support.js'

/**
 * The MCP summaries quoted ids and the agent's words as JSON, which leaves a zero-width space and a right-to-left
 * override raw: "zz" and "zz" plus U+200B were quoted alike in the very sentence warning they are two records, and an
 * agent relaying it showed the person nothing apart. They are spelled as the review pages spell them (`revealed`:
 * "zz[U+200B]"), and text that itself spells such a mark has its "[" spelled in turn.
 */
describe('MCP summaries spell unseen characters as the pages do, never raw (warrant mcp subprocess, odd http upstream)', () => {
  let upstream: OddUpstream
  let world: McpWorld
  let token: string
  before(async () => {
    upstream = await startOddUpstream(['zz', 'zz\u200b', 'zz[U+200B]'].map((id) => ({ id, name: `name of ${id}`, status: 'open', note: 'n' })))
    world = await startMcpWorld({ count: 5, edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
    token = (await world.fx.gateway.principals.issue({ name: 'things-mcp-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
  })
  after(async () => {
    await world?.close()
    await upstream?.close()
  })

  test('lookalike ids and the agent\'s words carry no unseen character raw', { timeout: 120_000 }, async () => {
    const { client } = await connectStdio(world, token)
    try {
      const created = await callTool(client, 'create_selection', { resource: 'things', filter: { status: 'open' } })
      assert.ok(!created.isError, text(created))
      const said = text(created)
      assert.doesNotMatch(said, /[\u200b\u202e]/u, said)
      assert.match(said, /"zz" \(no character apart\) and "zz\[U\+200B\]" \(U\+200B\)/, said)
      const proposed = await callTool(client, 'propose_change', { selection_id: created.structuredContent.selection_id, action: { type: 'set_status', params: { status: 'open \u202edesolc [U+202E]' } } })
      assert.ok(!proposed.isError, text(proposed))
      for (const words of [text(proposed), text(await callTool(client, 'get_plan', { plan_id: proposed.structuredContent.plan_id }))]) {
        assert.doesNotMatch(words, /[\u200b\u202e]/u, words)
        assert.match(words, /open \[U\+202E\]desolc \[U\+005B\]U\+202E\]/, words)
      }
    } finally {
      await client.close()
    }
  })
})
