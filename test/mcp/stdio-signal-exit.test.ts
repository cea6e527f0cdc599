import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { type EndlessDocsWorld, startEndlessDocsWorld, until } from './endless-docs.js'
import { connectStdio, exitOf, lastAuditSeq, mcpRowsAfter } from './support.js'

/**
 * `warrant mcp` stopped on SIGINT or SIGTERM wrote its rows and closed its server, then stayed alive for as long as
 * its client kept stdin open: Ctrl-C did nothing a person could see, a supervisor's SIGTERM had to be followed by a
 * SIGKILL. It now exits promptly (0, a server stopped as asked, as `warrant serve` does), a call in flight cut and
 * recorded as the server's cancel; a second signal during the shutdown exits at once with the signal's status.
 */

const PAGE_MS = 120
/** How long a stopped server may take to be gone. */
const EXIT_MS = 5_000

describe('MCP over stdio: SIGINT and SIGTERM end the process while the client keeps stdin open', () => {
  let docs: EndlessDocsWorld | undefined
  before(async () => void (docs = await startEndlessDocsWorld(PAGE_MS)))
  after(() => docs?.close())

  /** The server's process: the SDK's transport keeps it private. */
  const childOf = (transport: StdioClientTransport) => (transport as unknown as { _process: ChildProcess })._process
  async function start(name: string) {
    const token = (await docs!.world.fx.gateway.principals.issue({ name, role: 'agent', scopes: { resources: ['slowdocs'], actions: '*' } })).token
    const startSeq = await lastAuditSeq(docs!.world)
    const { client, stderr } = await connectStdio(docs!.world, token)
    const child = childOf(client.transport as StdioClientTransport)
    return { client, stderr, child, startSeq }
  }

  test('a second signal during the shutdown exits at once with its status (SIGINT and SIGTERM together: 130 or 143, never 0)', { timeout: 60_000 }, async () => {
    const { client, stderr, child } = await start('twice')
    try {
      // both pending at once: the process may take either first (libuv does not keep their order); the other is the second
      child.kill('SIGINT')
      child.kill('SIGTERM')
      const exit = await exitOf(child, EXIT_MS)
      assert.ok(exit !== 'still running' && exit.signal === null && (exit.code === 130 || exit.code === 143), `${JSON.stringify(exit)}; stderr: ${stderr().slice(-2000)}`)
    } finally {
      child.kill('SIGKILL')
      await client.close()
    }
  })

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`${signal} while idle: exits 0 within seconds, its calls' rows written`, { timeout: 60_000 }, async () => {
      const { client, stderr, child, startSeq } = await start(`idle-${signal}`)
      try {
        const listed = await client.callTool({ name: 'list_resources', arguments: {} })
        assert.equal(listed.isError, undefined, JSON.stringify(listed))
        child.kill(signal)
        const exit = await exitOf(child, EXIT_MS)
        assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${stderr().slice(-2000)}`)
        const rows = await mcpRowsAfter(docs!.world, startSeq)
        assert.ok(rows.some((r) => r.action === 'mcp:list_resources' && r.summary.outcome === 'ok'), JSON.stringify(rows.map((r) => r.action)))
      } finally {
        child.kill('SIGKILL')
        await client.close()
      }
    })

    test(`${signal} during a slow search: the walk is cut, its row says the server cut it, and the process exits 0 within seconds`, { timeout: 60_000 }, async () => {
      const { client, stderr, child, startSeq } = await start(`search-${signal}`)
      const pages = () => docs!.upstream.seen.filter((r) => r.url.pathname === '/docs').length
      const first = pages()
      const call = client.callTool({ name: 'search', arguments: { resource: 'slowdocs', filter: {}, page_size: 2, budget: { max_items: 100_000, max_pages: 10_000 } } }, undefined, { timeout: 60_000 })
      call.catch(() => undefined)
      try {
        await until(() => pages() - first >= 3, 20_000, 'the walk reads pages')
        child.kill(signal)
        const exit = await exitOf(child, EXIT_MS)
        assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${stderr().slice(-2000)}`)
        const row = (await mcpRowsAfter(docs!.world, startSeq)).find((r) => r.action === 'mcp:search')?.summary
        assert.equal(row?.outcome, 'failed', JSON.stringify(row))
        assert.deepEqual([row.cancelled, row.tool_finished, row.walk.stopped_early], [{ by: 'server' }, false, true])
      } finally {
        child.kill('SIGKILL')
        await client.close()
      }
    })
  }
})
