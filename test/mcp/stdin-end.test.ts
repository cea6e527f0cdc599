import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { type McpWorld, startMcpWorld } from './support.js'

/**
 * The MCP stdio specification: a client shuts the server down by closing its stdin. `warrant mcp` closed its store
 * the moment stdin ended, under the tool calls still running: `printf '…calls…' | warrant mcp` exited 0 with
 * no answer to any call, no audit row, "The database connection is not open" on stderr, a selection nobody heard of
 * cut off in its walk. It now answers every call it read before it closes.
 */
describe('stdio: calls read before stdin ends are answered and audited before the server exits', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld({ count: 300 })
  })
  after(() => world?.close())

  test('initialize and two tool calls written at once, then stdin closed: both answered, the selection frozen, a row each', { timeout: 120_000 }, async () => {
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_selection', arguments: { resource: 'subscriptions', filter: { status: 'past_due' } } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions' } } },
    ]
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', world.configPath], {
      env: { ...process.env, WARRANT_TOKEN: world.agentToken, WARRANT_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(''))
    const code = await new Promise((resolve) => child.once('exit', resolve))
    assert.equal(code, 0, err)
    const answers = out.split('\n').filter(Boolean).map((line) => JSON.parse(line))
    assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2, 3], `${out}\n${err}`)
    const selection = answers.find((a) => a.id === 2).result
    assert.equal(selection.isError, undefined, JSON.stringify(selection))
    const db = world.fx.gateway.store.db
    const stored = await db.selectFrom('selections').select(['id', 'state']).where('id', '=', selection.structuredContent.selection_id).execute()
    assert.deepEqual(stored, [{ id: selection.structuredContent.selection_id, state: 'frozen' }])
    const rows = await db.selectFrom('audit_events').select(['action']).where('surface', '=', 'mcp').where('level', '=', 'run').orderBy('seq').execute()
    // each tool call its own row; initialize and the notification one each, as /mcp records them
    assert.deepEqual(rows.map((r) => r.action).sort(), ['mcp:create_selection', 'mcp:search', 'stdio:initialize', 'stdio:notifications/initialized'])
    assert.doesNotMatch(err, /not open/)
  })
})
