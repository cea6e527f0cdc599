import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { type EndlessDocsWorld, startEndlessDocsWorld, until } from './endless-docs.js'
import { exitOf, lastAuditSeq, mcpRowsAfter } from './support.js'

/**
 * A client that closes stdin while a call is still running: `warrant mcp` waited for every call it had read to end
 * on its own, with no bound, so a search with a long deadline over a slow upstream held the process for minutes after
 * its client was gone. The calls now get a grace (10 s) to be answered; what still runs then is cut as a signal cuts
 * it (the server closes, each call's row written, `cancelled: {by: "server"}`), the rows waited for, the store closed,
 * exit 0.
 */

const PAGE_MS = 120
/** The grace, the signalled shutdown's bound for the rows, and a margin for a loaded machine. */
const EXIT_MS = 10_000 + 5_000 + 5_000

describe('stdio: stdin closed while a call runs: the call is cut after a grace, its row written, the process exits 0', () => {
  let docs: EndlessDocsWorld | undefined
  before(async () => void (docs = await startEndlessDocsWorld(PAGE_MS)))
  after(() => docs?.close())

  test('a search with a 300 s deadline over an endless upstream, stdin closed after 3 pages', { timeout: 90_000 }, async () => {
    const token = (await docs!.world.fx.gateway.principals.issue({ name: 'stdin-end-mid-call', role: 'agent', scopes: { resources: ['slowdocs'], actions: '*' } })).token
    const startSeq = await lastAuditSeq(docs!.world)
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', docs!.world.configPath], {
      env: { ...process.env, WARRANT_TOKEN: token, WARRANT_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search', arguments: { resource: 'slowdocs', filter: {}, page_size: 2, budget: { max_items: 100_000, max_pages: 10_000, deadline_ms: 300_000 } } },
      },
    ]
    const pages = () => docs!.upstream.seen.filter((r) => r.url.pathname === '/docs').length
    const first = pages()
    try {
      child.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''))
      await until(() => pages() - first >= 3, 30_000, 'the walk reads pages')
      child.stdin.end()
      const exit = await exitOf(child, EXIT_MS)
      assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${err.slice(-2000)}`)
      const row = (await mcpRowsAfter(docs!.world, startSeq)).find((r) => r.action === 'mcp:search')?.summary
      assert.equal(row?.outcome, 'failed', JSON.stringify(row))
      assert.deepEqual([row.cancelled, row.tool_finished, row.walk.stopped_early], [{ by: 'server' }, false, true])
      // initialize answered; the search, cut, is answered nothing (the SDK drops a call its server aborted)
      assert.deepEqual(out.split('\n').filter(Boolean).map((line) => JSON.parse(line).id), [1])
      assert.doesNotMatch(err, /not open/)
    } finally {
      child.kill('SIGKILL')
    }
  })
})
