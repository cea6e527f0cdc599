import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { after, before, describe, test } from 'node:test'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { INLINE_JSON_MAX_BYTES } from '../../src/mcp/results.js'
import { CLI_ENTRY, TSX_LOADER, runWarrant } from '../support/cli-config.js'
import { assertAnswered, assertRefused, callTool, text, connectStdio as connect, type McpWorld, runAgentFlow, startMcpWorld, TOOL_NAMES } from './support.js'

const args = (configPath: string) => ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', configPath]

/** Raw JSON-RPC lines to `warrant mcp`, as a client on any protocol version would send them. */
async function rawSession(world: McpWorld, token: string) {
  const child = spawn(process.execPath, args(world.configPath), { env: { ...process.env, WARRANT_TOKEN: token, WARRANT_LOG_LEVEL: 'silent' }, stdio: ['pipe', 'pipe', 'pipe'] })
  const lines = createInterface({ input: child.stdout })
  const pending = new Map<number, (message: any) => void>()
  const stray: string[] = []
  lines.on('line', (line) => {
    let message: any
    try {
      message = JSON.parse(line)
    } catch {
      stray.push(line)
      return
    }
    pending.get(message.id)?.(message)
  })
  let id = 0
  return {
    stray,
    request(method: string, params: unknown): Promise<any> {
      const n = ++id
      const answer = new Promise((resolve) => pending.set(n, resolve))
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`)
      return answer
    },
    notify(method: string) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`)
    },
    /** Ends stdin, as a client does when it quits: the server must exit on its own. */
    end(): Promise<number | null> {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      child.stdin.end()
      return exited
    },
  }
}

describe('warrant mcp over stdio (official MCP client, real subprocess)', () => {
  let world: McpWorld
  before(async () => {
    world = await startMcpWorld()
  })
  after(async () => {
    await world?.close()
  })

  test('the whole flow: search, selection, proposal, HTTP approval by a reviewer, commit, operation; every shortcut refused', { timeout: 120_000 }, async () => {
    const { client, errors, stderr } = await connect(world, world.agentToken)
    try {
      const { operation } = await runAgentFlow(client, world)
      assert.ok(operation.counts.succeeded > 0)
      assert.deepEqual(errors, [], 'nothing but protocol on stdout')
      assert.match(stderr(), /MCP server ready on stdio/, 'logs go to stderr')
    } finally {
      await client.close()
    }
  })

  test('initialize on the oldest and the latest protocol versions; stdout carries only JSON-RPC; the server exits when stdin ends', { timeout: 60_000 }, async () => {
    for (const version of ['2024-11-05', LATEST_PROTOCOL_VERSION]) {
      const session = await rawSession(world, world.agentToken)
      const init = await session.request('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: `raw-${version}`, version: '0' } })
      assert.equal(init.result.protocolVersion, version)
      assert.equal(init.result.serverInfo.name, 'warrant')
      assert.deepEqual(init.result.capabilities, { tools: {} }, 'tools, and no listChanged: no list_changed notification is ever sent')
      session.notify('notifications/initialized')
      const list = await session.request('tools/list', {})
      assert.equal(list.result.tools.length, TOOL_NAMES.length)
      const spent = Buffer.byteLength(JSON.stringify(init.result)) + Buffer.byteLength(JSON.stringify(list.result))
      assert.ok(spent < 18 * 1024, `initialize + tools/list over stdio: ${spent} bytes`)
      const call = await session.request('tools/call', { name: 'search', arguments: { resource: 'subscriptions', filter: { region: 'eu' }, page_size: 20, budget: { max_pages: 1 } } })
      // an old client reads the text blocks: completeness first, then the whole object as JSON (a current one,
      // which reads structuredContent, gets the JSON without the records when it is large)
      assert.match(call.result.content[0].text, /^INCOMPLETE \(CLIENT_LIMIT_REACHED/)
      const copy = JSON.parse(call.result.content[1].text)
      assert.equal(copy.complete, false)
      const large = Buffer.byteLength(JSON.stringify(call.result.structuredContent)) > INLINE_JSON_MAX_BYTES
      if (version === '2024-11-05' || !large) assert.deepEqual(copy, call.result.structuredContent)
      else assert.deepEqual(copy.omitted_from_text, { items: '20 entries, in structuredContent' })
      assert.equal(call.result.structuredContent.complete, false)
      assert.equal(await session.end(), 0)
      assert.deepEqual(session.stray, [], 'no stray line on stdout')
    }
  })

  test('no token, or a bad one: the server refuses to start, says why on stderr, and prints nothing on stdout', { timeout: 60_000 }, async () => {
    for (const token of ['', 'wrt_agent_not-a-real-token']) {
      const child = spawn(process.execPath, args(world.configPath), { env: { ...process.env, WARRANT_TOKEN: token, WARRANT_LOG_LEVEL: 'silent' }, stdio: ['pipe', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c: Buffer) => (stdout += c))
      child.stderr.on('data', (c: Buffer) => (stderr += c))
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      assert.equal(code, 3, stderr)
      assert.match(stderr, /unauthenticated/)
      assert.equal(stdout, '')
    }
  })

  test('the token is checked on every call: revoked mid-session, the next tool call is refused', { timeout: 60_000 }, async () => {
    const issued = await world.fx.gateway.principals.issue({ name: 'soon-revoked', role: 'agent', scopes: { resources: ['subscriptions'], actions: [] } })
    const { client } = await connect(world, issued.token)
    try {
      assertAnswered(await callTool(client, 'list_resources'))
      await world.fx.gateway.principals.revoke(issued.token_id)
      assertRefused(await callTool(client, 'list_resources'), 'unauthenticated')
      assertRefused(await callTool(client, 'search', { resource: 'subscriptions' }), 'unauthenticated')
    } finally {
      await client.close()
    }
  })

  test('disabled mid-session by `warrant principal disable` in another process: the next tool call is refused, naming why and to stop', { timeout: 60_000 }, async () => {
    await world.fx.gateway.principals.issue({ name: 'soon-disabled', role: 'agent', scopes: { resources: ['subscriptions'], actions: [] } })
    const issued = await world.fx.gateway.principals.addToken({ principal: 'soon-disabled' })
    const { client } = await connect(world, issued.token)
    try {
      assertAnswered(await callTool(client, 'list_resources'))
      const disabled = await runWarrant(['principal', 'disable', 'soon-disabled', '--reason', 'stdio test', '--config', world.configPath], world.fx.dir)
      assert.equal(disabled.code, 0, disabled.stderr)
      const refused = await callTool(client, 'list_resources')
      assertRefused(refused, 'unauthenticated')
      assert.equal(refused.structuredContent.error.details.reason, 'principal_disabled')
      assert.match(text(refused), /principal "soon-disabled" is disabled[\s\S]*\nNext: .*Stop and tell the person running this agent/)
    } finally {
      await client.close()
    }
  })

  test('a reviewer token over MCP still has no tool that approves', { timeout: 60_000 }, async () => {
    const { client } = await connect(world, world.fx.tokens.reviewer)
    try {
      const { tools } = await client.listTools()
      assert.ok(!tools.some((t) => /approv/i.test(t.name)))
      assertRefused(await callTool(client, 'get_plan', { plan_id: 'plan_does_not_exist' }), 'not_found')
    } finally {
      await client.close()
    }
  })
})
