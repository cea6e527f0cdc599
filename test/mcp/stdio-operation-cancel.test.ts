import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../../src/contract/index.js'
import { delay, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { etagOf, type Thing, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { until } from './endless-docs.js'
import { connectStdio, lastAuditSeq, type McpWorld, mcpRowsAfter, startMcpWorld } from './support.js'

/**
 * Tool calls about an operation, over stdio with the official client: a `get_operation` wait (up to 30 s) ends at
 * the server's shutdown, its row written, rather than hold the process asked to stop; a `commit_change` the client
 * cancels still commits, and its operation runs to its end, every target written once.
 */

/** Things `a1..a3` (the operation a wait watches) and `b1..b3` (the one a cancelled commit starts). */
const IDS = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3']

describe('MCP over stdio: operations and cancels', () => {
  let world: McpWorld
  let upstream: TestUpstream
  let agent: Actor
  let agentToken: string
  const things = new Map<string, Thing>(IDS.map((id) => [id, { id, name: id[0]!, status: 'open', note: 'n' }]))
  const writes = new Map<string, number>()
  /** Every PATCH waits for this: the test decides when a write may land. */
  let gate: Promise<void> = Promise.resolve()

  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      if (req.method === 'GET' && req.url.pathname === '/things') return sendJson(res, 200, { things: [...things.values()].map((t) => ({ ...t, etag: etagOf(t) })), next: null })
      const thing = things.get(decodeURIComponent(req.url.pathname.slice('/things/'.length)))
      if (!thing) return sendJson(res, 404, { error: 'not found' })
      if (req.method === 'GET') return sendJson(res, 200, thing, { etag: etagOf(thing) })
      await gate
      if (req.headers['if-match'] !== etagOf(thing)) return sendJson(res, 412, { error: 'precondition failed' })
      thing.status = String((JSON.parse(req.body) as Thing).status)
      writes.set(thing.id, (writes.get(thing.id) ?? 0) + 1)
      return sendJson(res, 200, thing, { etag: etagOf(thing) })
    })
    world = await startMcpWorld({ count: 5, edit: (config) => void (config.resources.things = thingsResourceConfig(upstream.origin)) })
    agentToken = (await world.fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
    agent = await world.fx.gateway.principals.authenticate(agentToken, 'http')
  })
  after(async () => {
    await world?.close()
    await upstream?.close()
  })

  /** An approved plan closing the things named `name`. */
  async function approvedPlan(name: string) {
    const reviewer = await world.fx.gateway.principals.authenticate(world.fx.tokens.reviewer, 'http')
    const selection = await world.fx.gateway.selections.create(agent, 'things', { filter: { name } })
    const plan = await world.fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
    await world.fx.gateway.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    return plan
  }

  test('SIGTERM during a get_operation wait of 30 s: the wait ends, its row says the server cut it, the process exits 0 within seconds', { timeout: 60_000 }, async () => {
    let open = () => {}
    gate = new Promise((resolve) => (open = resolve))
    const plan = await approvedPlan('a')
    // executed by the test's own gateway, held at its first write: unfinished for as long as the test wants
    const receipt = await world.fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest })
    const startSeq = await lastAuditSeq(world)
    const { client, stderr } = await connectStdio(world, agentToken)
    const child = (client.transport as unknown as { _process: ChildProcess })._process
    try {
      const call = client.callTool({ name: 'get_operation', arguments: { operation_id: receipt.operation_id, wait_ms: 30_000 } }, undefined, { timeout: 60_000 })
      call.catch(() => undefined)
      await delay(500)
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
      const sent = Date.now()
      child.kill('SIGTERM')
      const code = await Promise.race([exited, delay(4_000).then(() => 'still running' as const)])
      assert.equal(code, 0, `stderr: ${stderr().slice(-2000)}`)
      assert.ok(Date.now() - sent < 4_000)
      const row = (await mcpRowsAfter(world, startSeq)).find((r) => r.action === 'mcp:get_operation')
      assert.equal(row?.summary.outcome, 'failed', JSON.stringify(row?.summary))
      assert.deepEqual([row.summary.cancelled, row.summary.tool_finished, row.operation_id], [{ by: 'server' }, false, receipt.operation_id])
    } finally {
      open()
      child.kill('SIGKILL')
      await client.close()
    }
    assert.equal((await world.fx.gateway.operations.waitFor(receipt.operation_id, 30_000)).counts.succeeded, 3)
  })

  test('commit_change cancelled right after it is sent: the operation is committed and runs to its end, each target written once, the row says the client left', { timeout: 60_000 }, async () => {
    let open = () => {}
    gate = new Promise((resolve) => (open = resolve))
    const plan = await approvedPlan('b')
    const startSeq = await lastAuditSeq(world)
    const { client, stderr } = await connectStdio(world, agentToken)
    const transport = client.transport as StdioClientTransport
    const stop = new AbortController()
    // the cancel follows the request on the same stdin at once, before the server can have answered it; no write
    // lands before the cancel was sent (the upstream holds every PATCH until then)
    const send = transport.send.bind(transport)
    transport.send = async (message: JSONRPCMessage) => {
      await send(message)
      if ('method' in message && message.method === 'tools/call') {
        stop.abort('the user stopped it')
        open()
      }
    }
    try {
      const call = client.callTool({ name: 'commit_change', arguments: { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: randomUUID() } }, undefined, { signal: stop.signal, timeout: 60_000 })
      await assert.rejects(call)
      await until(async () => (await mcpRowsAfter(world, startSeq)).some((r) => r.action === 'mcp:commit_change'), 10_000, `the mcp:commit_change row; stderr: ${stderr().slice(-2000)}`)
      const rows = await mcpRowsAfter(world, startSeq)
      const row = rows.find((r) => r.action === 'mcp:commit_change')!
      assert.deepEqual([row.summary.outcome, row.summary.cancelled, row.summary.tool_finished], ['client_closed', { by: 'client', reason: 'the user stopped it' }, true], JSON.stringify(row.summary))
      assert.equal(row.summary.error, undefined, 'committed, not refused')
      assert.equal(row.plan_id, plan.plan_id)
      assert.match(String(row.operation_id), /^op_/, 'the row names the operation the client never heard of')
      const stdio = rows.find((r) => r.action === 'stdio:tools/call')?.summary
      assert.deepEqual([stdio?.outcome, stdio?.tool_started], ['client_closed', true], JSON.stringify(stdio))
      // executed in the mcp process, whose client is still connected: it runs to its end
      const done = await world.fx.gateway.operations.waitFor(row.operation_id, 30_000)
      assert.deepEqual([done.state, done.counts.succeeded, done.target_count], ['succeeded', 3, 3], JSON.stringify(done))
      const operations = await world.fx.gateway.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
      assert.deepEqual(operations.map((o) => o.id), [row.operation_id], 'one operation for the plan')
      assert.deepEqual(['b1', 'b2', 'b3'].map((id) => [id, writes.get(id), things.get(id)!.status]), ['b1', 'b2', 'b3'].map((id) => [id, 1, 'closed']))
    } finally {
      open()
      await client.close()
    }
  })
})
