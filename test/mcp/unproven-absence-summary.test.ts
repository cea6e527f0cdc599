import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { decide } from '../../src/contract/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { callTool, connectAgent, type McpWorld, startSlowDocsWorld, text } from './support.js'

/**
 * An http resource whose list has no snapshot and no keyset proof answers `complete`, `stability: "unproven"`: the
 * shared rule (`decide(…, 'prove_absence')`, the CLI's words) says such an empty result does not prove absence. The
 * MCP search text, the sentence an agent acts on, said "the whole scope was examined, so this empty result proves
 * there are none" whatever the stability. It now says what `decide` says.
 */
describe('MCP search text over a walk that could not prove the data held still', () => {
  let world: McpWorld
  let upstream: TestUpstream
  let agent: Client

  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      if (req.url.pathname !== '/docs') return sendJson(res, 404, { error: 'no such list' })
      const docs = [
        { id: 'd1', state: 'open', rev: 1 },
        { id: 'd2', state: 'open', rev: 1 },
      ]
      const after = req.url.searchParams.get('after')
      return after === null ? sendJson(res, 200, { data: docs.slice(0, 1), next: 'c1' }) : sendJson(res, 200, { data: docs.slice(1), next: null })
    })
    world = await startSlowDocsWorld(upstream.origin)
    const token = (await world.fx.gateway.principals.issue({ name: 'absence-agent', role: 'agent', scopes: { resources: ['slowdocs', 'subscriptions'], actions: '*' } })).token
    agent = await connectAgent({ ...world, agentToken: token }, 'absence-agent')
  })
  after(async () => {
    await agent?.close()
    await world?.close()
    await upstream?.close()
  })

  test('an empty complete but unproven result: the text says it does NOT prove absence, as decide() does', async () => {
    const result = await callTool(agent, 'search', { resource: 'slowdocs', filter: { state: 'closed' }, page_size: 1 })
    const envelope = result.structuredContent
    assert.equal(envelope.complete, true)
    assert.equal(envelope.items.length, 0)
    assert.equal(envelope.scope.stability, 'unproven')
    assert.equal(decide(envelope, 'prove_absence').decision, 'refuse_or_request_review')
    const said = text(result)
    assert.doesNotMatch(said, /proves there are none/)
    assert.match(said, /does NOT prove there are none/)
    assert.match(said, /held still/)
  })

  test('a non-empty complete but unproven result says a record that moved during the walk may be missing', async () => {
    const result = await callTool(agent, 'search', { resource: 'slowdocs', filter: {}, page_size: 1 })
    assert.equal(result.structuredContent.items.length, 2)
    assert.match(text(result), /could not prove the data held still/)
  })

  test('an empty complete result that did hold still (a SQL snapshot) still says it proves absence', async () => {
    const result = await callTool(agent, 'search', { resource: 'subscriptions', filter: { owner: 'nobody-at-all' } })
    const envelope = result.structuredContent
    assert.equal(envelope.complete, true)
    assert.equal(decide(envelope, 'prove_absence').decision, 'proceed')
    assert.match(text(result), /so this empty result proves there are none/)
  })
})
