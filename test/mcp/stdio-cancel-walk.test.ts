import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { delay, type TestUpstream } from '../connectors/http/upstream-server.js'
import { type EndlessDocsWorld, startEndlessDocsWorld, until } from './endless-docs.js'
import { connectStdio, lastAuditSeq, type McpWorld, mcpRowsAfter } from './support.js'

/**
 * The official MCP client cancels a tool call (`callTool(..., { signal })` sends notifications/cancelled): the SDK
 * aborts the signal it hands the tool, and Warrant's tools ignored it, so a cancelled search or create_selection
 * walked the upstream to its end (thousands of pages), and its row said only `ok` once it got there. Now the walk
 * stops fetching pages at the cancel (the one in flight is abandoned), the build is removed, and the tool's row says
 * `client_closed`, cancelled by the client, with the pages it read.
 */

/** Each page waits this long upstream: a walk of thousands of them outlasts any test. */
const PAGE_MS = 120

describe('MCP over stdio: a cancelled walk stops at the upstream', () => {
  let world: McpWorld
  let upstream: TestUpstream

  let docs: EndlessDocsWorld | undefined
  before(async () => ({ world, upstream } = docs = await startEndlessDocsWorld(PAGE_MS)))
  after(() => docs?.close())

  for (const tool of ['search', 'create_selection'] as const) {
    test(`${tool} cancelled mid-walk: no page asked for after the cancel but the one in flight; its row says client_closed`, { timeout: 60_000 }, async () => {
      const token = (await world.fx.gateway.principals.issue({ name: `cancel-${tool}`, role: 'agent', scopes: { resources: ['slowdocs'], actions: '*' } })).token
      const startSeq = await lastAuditSeq(world)
      const { client } = await connectStdio(world, token)
      const pages = () => upstream.seen.filter((r) => r.url.pathname === '/docs').length
      const first = pages()
      const stop = new AbortController()
      const args = tool === 'search' ? { resource: 'slowdocs', filter: {}, page_size: 2, budget: { max_items: 100_000, max_pages: 10_000 } } : { resource: 'slowdocs', filter: {}, page_size: 2 }
      const call = client.callTool({ name: tool, arguments: args }, undefined, { signal: stop.signal, timeout: 60_000 })
      call.catch(() => undefined)
      try {
        await until(() => pages() - first >= 3, 20_000, 'the walk reads pages')
        stop.abort('the user stopped it')
        const atCancel = pages() - first
        await assert.rejects(call)
        // many page times: an unstopped walk asks for several more meanwhile
        await delay(PAGE_MS * 8)
        const asked = pages() - first
        assert.ok(asked <= atCancel + 1, `${asked} pages asked for, ${atCancel} when cancelled: at most the one in flight may follow`)
        await until(async () => (await mcpRowsAfter(world, startSeq)).some((r) => r.action === `mcp:${tool}`), 10_000, `the mcp:${tool} row`)
        const row = (await mcpRowsAfter(world, startSeq)).find((r) => r.action === `mcp:${tool}`)!.summary
        assert.equal(row.outcome, 'client_closed', JSON.stringify(row))
        assert.deepEqual(row.cancelled, { by: 'client', reason: 'the user stopped it' })
        assert.equal(row.walk?.stopped_early, true, JSON.stringify(row))
        assert.ok(row.walk.pages_read >= 1 && row.walk.pages_read <= asked, JSON.stringify(row))
        assert.equal(row.error, undefined, 'no refusal: the client withdrew it')
        const stdio = (await mcpRowsAfter(world, startSeq)).find((r) => r.action === 'stdio:tools/call')?.summary
        assert.equal(stdio?.outcome, 'client_closed', JSON.stringify(stdio))
        if (tool === 'create_selection') {
          // the build given up as an interrupted one is: nothing left that looks like a selection, half-frozen or not
          const left = await world.fx.gateway.store.db.selectFrom('selections').select(['id', 'state']).where('resource', '=', 'slowdocs').execute()
          assert.deepEqual(left, [], JSON.stringify(left))
        }
      } finally {
        stop.abort()
        await client.close()
      }
    })
  }

  test('the server shut down (SIGINT) mid-search: the walk stops, and its row, written before the store closes, says the server cut it', { timeout: 60_000 }, async () => {
    const token = (await world.fx.gateway.principals.issue({ name: 'cancel-shutdown', role: 'agent', scopes: { resources: ['slowdocs'], actions: '*' } })).token
    const startSeq = await lastAuditSeq(world)
    const { client, stderr } = await connectStdio(world, token)
    const transport = client.transport as StdioClientTransport
    const pages = () => upstream.seen.filter((r) => r.url.pathname === '/docs').length
    const first = pages()
    const call = client.callTool({ name: 'search', arguments: { resource: 'slowdocs', filter: {}, page_size: 2, budget: { max_items: 100_000, max_pages: 10_000 } } }, undefined, { timeout: 60_000 })
    call.catch(() => undefined)
    try {
      await until(() => pages() - first >= 3, 20_000, 'the walk reads pages')
      process.kill(transport.pid!, 'SIGINT')
      const atStop = pages() - first
      await until(async () => (await mcpRowsAfter(world, startSeq)).some((r) => r.action === 'mcp:search'), 10_000, `the mcp:search row; stderr: ${stderr().slice(-2000)}`)
      await delay(PAGE_MS * 4)
      assert.ok(pages() - first <= atStop + 1, `${pages() - first} pages asked for, ${atStop} at the shutdown`)
      const row = (await mcpRowsAfter(world, startSeq)).find((r) => r.action === 'mcp:search')?.summary
      assert.equal(row?.outcome, 'failed', JSON.stringify(row))
      assert.deepEqual([row.cancelled, row.tool_finished, row.walk.stopped_early], [{ by: 'server' }, false, true])
    } finally {
      await client.close()
    }
  })
})
