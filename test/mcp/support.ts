import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { WARRANT_TOOLS } from '../../src/mcp/index.js'
import { runLimitsOf } from '../../src/plans/index.js'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import type { StoreKind } from '../support/stores.js'

/** The tools an agent has, in the order of the flow. None approves. */
export const TOOL_NAMES = [
  'list_resources',
  'search',
  'create_selection',
  'read_selection',
  'propose_change',
  'get_plan',
  'commit_change',
  'get_operation',
  'propose_compensation',
  'propose_remainder',
] as const
export const READ_ONLY_TOOLS = ['list_resources', 'search', 'read_selection', 'get_plan', 'get_operation']

export interface McpWorld {
  readonly fx: GatewayFixture
  /** A JSON config file naming the same store and upstream as the in-process gateway. */
  readonly configPath: string
  /** An agent token scoped to `subscriptions` and the `pause_collection` action only. */
  readonly agentToken: string
  close(): Promise<void>
}

/**
 * One temp store (SQLite unless `store` says otherwise) shared by an in-process gateway (HTTP server on loopback, used by the reviewer) and
 * whatever MCP server the test starts (a `warrant mcp` subprocess, or `/mcp` on the same server). A second
 * resource, `archive`, exists so that a resource outside the agent's scope can be named.
 */
export async function startMcpWorld(
  options: { readonly count?: number; readonly clock?: () => Date; readonly edit?: (config: Record<string, any>) => void; readonly store?: StoreKind } = {},
): Promise<McpWorld> {
  let raw: Record<string, any> = {}
  const fx = await startDemoGateway({
    store: options.store ?? 'sqlite',
    count: options.count ?? 2000,
    clock: options.clock,
    edit: (config) => {
      config.resources.archive = { ...structuredClone(config.resources.subscriptions), description: 'The same table, as a resource the agent token does not cover', standing_approvals: [] }
      options.edit?.(config)
      raw = config
    },
  })
  const configPath = join(fx.dir, 'warrant.json')
  writeFileSync(configPath, JSON.stringify(raw, null, 2))
  const issued = await fx.gateway.principals.issue({ name: 'mcp-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: ['pause_collection'] } })
  return { fx, configPath, agentToken: issued.token, close: () => fx.close() }
}

/**
 * A world with `slowdocs`, an HTTP resource over the test upstream at `origin` (list `/docs`, cursor `after`, page size
 * `n`, items under `data`): the upstream decides how slow each page is.
 */
export function startSlowDocsWorld(origin: string): Promise<McpWorld> {
  return startMcpWorld({
    count: 5,
    edit: (config) => {
      config.resources.slowdocs = {
        environment: { name: 'slowdocs' },
        connector: { kind: 'http', sources: [{ name: 'docs', base_url: origin }], list: { path: '/docs', items_path: 'data', page_size_param: 'n', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next' } }, get: { path: '/docs/{id}' }, version: { from: 'field', field: 'rev' }, timeout_ms: 20_000 },
        fields: { id: 'string', state: 'string', rev: 'integer' },
        review_fields: ['id', 'state'],
      }
    },
  })
}

export type ToolResult = CallToolResult & { structuredContent?: any }

/**
 * One tool call. An answer's structuredContent is parsed with the tool's full HTTP response schema: tools/list
 * advertises only `{type: "object"}` (context budget), so the test checks what the client can no longer.
 */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as ToolResult
  const tool = WARRANT_TOOLS.find((t) => t.name === name)
  if (tool && !result.isError) {
    const parsed = tool.output.safeParse(result.structuredContent)
    assert.ok(parsed.success, `${name}: structuredContent fits the HTTP answer schema: ${parsed.success ? '' : parsed.error.message.slice(0, 600)}`)
  }
  return result
}

export function text(result: ToolResult, index = 0): string {
  const block = result.content[index]
  assert.ok(block && block.type === 'text', `content[${index}] is text`)
  return block.text
}

/** A refusal: isError, structuredContent is the HTTP error body with this code, the text names it and the next step. */
export function assertRefused(result: ToolResult, code: string): void {
  assert.equal(result.isError, true, `expected a refusal ${code}, got ${JSON.stringify(result).slice(0, 400)}`)
  assert.equal(result.structuredContent?.error?.code, code, JSON.stringify(result.structuredContent))
  assert.equal(typeof result.structuredContent.error.message, 'string')
  assert.match(text(result), new RegExp(`^REFUSED \\(${code}\\): `))
  assert.match(text(result), /\nNext: /)
  assert.deepEqual(JSON.parse(text(result, 1)), result.structuredContent, 'the second text block is the same body as JSON')
}

/** Cursors are signed with the time they were issued: two calls a millisecond apart differ only there. */
function withoutCursorStamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCursorStamps)
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, (k === 'next_cursor' || k === 'cursor') && typeof v === 'string' ? '<signed cursor>' : withoutCursorStamps(v)]))
  return value
}

/** structuredContent is the HTTP API's answer to the same call (cursors aside: each is signed when issued). */
export function assertSameAsHttp(mcp: unknown, http: unknown): void {
  assert.deepEqual(withoutCursorStamps(mcp), withoutCursorStamps(http))
}

/**
 * An answer: structuredContent is the data; the second text block is the same object as JSON, or for a
 * large answer the same object without its largest lists, each named in `omitted_from_text`.
 */
export function assertAnswered(result: ToolResult): any {
  assert.ok(!result.isError, `expected an answer, got ${JSON.stringify(result).slice(0, 600)}`)
  assert.ok(result.structuredContent && typeof result.structuredContent === 'object')
  const copy = JSON.parse(text(result, 1))
  if ('omitted_from_text' in copy) {
    const { omitted_from_text: omitted, ...rest } = copy
    const expected = { ...result.structuredContent }
    for (const key of Object.keys(omitted)) {
      assert.ok(Array.isArray(expected[key]), `${key} is a list of the answer`)
      assert.equal(omitted[key], `${expected[key].length} entries, in structuredContent`)
      delete expected[key]
    }
    assert.deepEqual(rest, expected, 'the second text block is the answer without the omitted lists')
  } else assert.deepEqual(copy, result.structuredContent, 'the second text block is the same object as JSON')
  return result.structuredContent
}

/** tools/list: every tool, each with input and output schemas and annotations; nothing that approves. */
export async function assertToolList(client: Client): Promise<void> {
  const { tools } = await client.listTools()
  assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort())
  assert.ok(!tools.some((t) => /approv|reject|decide/i.test(t.name)), 'no tool approves')
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', `${tool.name} input`)
    assert.deepEqual(tool.outputSchema, { type: 'object' }, `${tool.name}: structuredContent is an object; its shape is the HTTP API's`)
    assert.ok(tool.annotations, `${tool.name} annotations`)
    // the agent rules (in full in the server instructions), briefly, on every tool that returns records or ids
    if (tool.name !== 'list_resources') {
      assert.match(tool.description ?? '', /Only complete: true proves absence/)
      assert.match(tool.description ?? '', /incomplete_reasons/)
      assert.match(tool.description ?? '', /never invent cursors, ids, digests/)
    }
    if (READ_ONLY_TOOLS.includes(tool.name)) assert.equal(tool.annotations.readOnlyHint, true, `${tool.name} is read-only`)
    else assert.equal(tool.annotations.readOnlyHint, false, `${tool.name} is not read-only`)
  }
  const commit = tools.find((t) => t.name === 'commit_change')!
  assert.equal(commit.annotations?.destructiveHint, true)
  assert.equal(commit.annotations?.idempotentHint, true)
  assert.deepEqual([...(commit.inputSchema.required ?? [])].sort(), ['expected_digest', 'idempotency_key'])
  const search = tools.find((t) => t.name === 'search')!
  assert.ok('budget' in (search.inputSchema.properties ?? {}) && 'cursor' in (search.inputSchema.properties ?? {}))
}

const ARTICLE_SELECTION = {
  resource: 'subscriptions',
  filter: { status: 'past_due', region: 'eu' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
}

/**
 * The article's flow, driven by an MCP client as the scoped agent, with a reviewer approving over HTTP,
 * and every shortcut the agent might try refused. Returns the finished operation.
 */
export async function runAgentFlow(client: Client, world: McpWorld): Promise<{ operation: any; plan: any; selection: any }> {
  const { fx, agentToken } = world
  const asAgent = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fx.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${agentToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))

  await assertToolList(client)

  // list_resources: exactly the HTTP answer, scoped (no `archive`)
  const resources = assertAnswered(await callTool(client, 'list_resources'))
  assert.deepEqual(resources, (await asAgent('GET', '/v1/resources')).body)
  assert.deepEqual(resources.resources.map((r: any) => r.name), ['subscriptions'])

  // search with a page limit: complete false as data, CLIENT_LIMIT_REACHED, a real continuation
  const request = { filter: { region: 'eu' }, page_size: 50, budget: { max_pages: 1 } }
  const partial = await callTool(client, 'search', { resource: 'subscriptions', ...request })
  const envelope = assertAnswered(partial)
  assert.equal(envelope.complete, false)
  assert.equal(envelope.status, 'partial')
  assert.ok(envelope.incomplete_reasons.some((r: any) => r.code === 'CLIENT_LIMIT_REACHED' && r.limit?.name === 'max_pages'))
  assert.equal(envelope.continuation.kind, 'next_cursor')
  assert.equal(envelope.items.length, 50)
  assert.match(text(partial), /^INCOMPLETE \(CLIENT_LIMIT_REACHED: max_pages=1\): 50 records returned/)
  assert.match(text(partial), /the answer's continuation\.cursor/)
  assert.doesNotMatch(text(partial), /structuredContent/, 'a client on an older protocol has none: the summary names the cursor where every client finds it')
  const http = (await asAgent('POST', '/v1/resources/subscriptions/search', request)).body
  const { scope: _s1, ...mcpRest } = envelope
  const { scope: _s2, ...httpRest } = http
  assertSameAsHttp(mcpRest, httpRest)
  // the continuation goes on with the same walk
  const next = assertAnswered(await callTool(client, 'search', { resource: 'subscriptions', ...request, cursor: envelope.continuation.cursor }))
  assert.ok(!next.items.some((i: any) => envelope.items.some((j: any) => j.id === i.id)), 'the cursor continues, it does not restart')
  // an invented cursor is refused, with HTTP's code
  assertRefused(await callTool(client, 'search', { resource: 'subscriptions', ...request, cursor: 'eyJvZmZzZXQiOjEwMH0' }), 'invalid_cursor')
  // an empty complete result says it proves absence
  const none = await callTool(client, 'search', { resource: 'subscriptions', filter: { customer_name: 'No Such Customer' } })
  assert.equal(assertAnswered(none).complete, true)
  assert.match(text(none), /^COMPLETE: 0 records .*proves there are none/)

  // bad input: invalid_request, as on HTTP
  assertRefused(await callTool(client, 'search', { resource: 'subscriptions', page_size: 'lots' }), 'invalid_request')
  assertRefused(await callTool(client, 'search', { resource: 'subscriptions', fields: ['card_token'] }), 'denied_field')

  // the selection
  const created = await callTool(client, 'create_selection', ARTICLE_SELECTION)
  const selection = assertAnswered(created)
  assert.equal(selection.complete, true)
  assert.equal(selection.committable, true)
  assert.ok(selection.count > 25, `enough targets to need a reviewer (${selection.count})`)
  assert.deepEqual(selection.exclusions.map((e: any) => e.rule), ['disputed', 'legal_hold'])
  assert.match(text(created), /^COMPLETE: selection sel_/)
  assertSameAsHttp(assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id })), (await asAgent('GET', `/v1/selections/${selection.selection_id}`)).body)
  const firstPage = assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id, part: 'records', limit: 10 }))
  assert.equal(firstPage.records.length, 10)
  assertSameAsHttp(firstPage, (await asAgent('GET', `/v1/selections/${selection.selection_id}/records?limit=10`)).body)
  const excluded = assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id, part: 'excluded', rule: 'disputed' }))
  assert.equal(excluded.count, selection.exclusions[0].count)

  // propose: what approval it needs and where a person reviews it
  const proposed = await callTool(client, 'propose_change', { selection_id: selection.selection_id, action: { type: 'pause_collection', params: { reason: 'payment failed (MCP test)' } } })
  const plan = assertAnswered(proposed)
  assert.equal(plan.state, 'pending')
  assert.notEqual(plan.approval.required, 'none')
  assert.match(text(proposed), /^COMPLETE selection/)
  assert.match(text(proposed), /Needs approval/)
  // a link where the gateway answering serves review pages (/mcp); `warrant mcp` over stdio serves none: a hint instead
  if (plan.review_url === null) {
    assert.match(plan.review_hint, /warrant serve/)
    assert.ok(text(proposed).includes(plan.review_hint))
  } else {
    assert.match(plan.review_url, new RegExp(plan.plan_id))
    assert.equal(plan.review_hint, null)
    assert.ok(text(proposed).includes(plan.review_url))
  }

  // the shortcuts: commit before approval, approve, act outside the scope
  assertRefused(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: randomUUID() }), 'not_approved')
  assertRefused(
    await callTool(client, 'commit_change', { selection_id: selection.selection_id, resource: 'subscriptions', action: { type: 'pause_collection', params: { reason: 'payment failed (MCP test)' } }, expected_digest: selection.digest, idempotency_key: randomUUID() }),
    'not_approved',
  )
  assertRefused(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest }), 'idempotency_key_missing')
  const approveTool = await client.callTool({ name: 'approve_plan', arguments: { plan_id: plan.plan_id } })
  assert.equal(approveTool.isError, true, 'there is no approve tool')
  const selfApproval = await asAgent('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
  assert.equal(selfApproval.status, 403)
  assert.equal(selfApproval.body.error.code, 'forbidden')
  assertRefused(await callTool(client, 'search', { resource: 'archive', filter: {} }), 'forbidden')
  assertRefused(await callTool(client, 'create_selection', { ...ARTICLE_SELECTION, resource: 'archive' }), 'forbidden')
  assertRefused(await callTool(client, 'propose_change', { selection_id: selection.selection_id, action: { type: 'resume_collection' } }), 'forbidden')
  assertRefused(
    await callTool(client, 'commit_change', { selection_id: selection.selection_id, resource: 'subscriptions', action: { type: 'resume_collection' }, expected_digest: selection.digest, idempotency_key: randomUUID() }),
    'forbidden',
  )

  // a reviewer approves the exact digest, over HTTP
  const approval = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'ok' })
  assert.equal(approval.status, 201, JSON.stringify(approval.body))
  const approved = await callTool(client, 'get_plan', { plan_id: plan.plan_id })
  assert.equal(assertAnswered(approved).approval_state.approved, true)
  assert.deepEqual(approved.structuredContent.run_limits, runLimitsOf(fx.config.execution, fx.config.resources.subscriptions!.connector), 'the stop rules and pacing the plan binds')
  // the same plan, but for where it is reviewed: HTTP is answered by a process serving review pages, `warrant mcp`
  // over stdio by one serving none (review_url null, review_hint saying so)
  const overHttp = (await asAgent('GET', `/v1/plans/${plan.plan_id}`)).body
  const { review_url: mcpUrl, review_hint: mcpHint, ...mcpPlan } = approved.structuredContent
  const { review_url: httpUrl, review_hint: httpHint, ...httpPlan } = overHttp
  assertSameAsHttp(mcpPlan, httpPlan)
  assert.equal(httpUrl, `${fx.base}/review/plans/${plan.plan_id}`)
  assert.equal(httpHint, null)
  assert.ok(mcpUrl === httpUrl || (mcpUrl === null && /warrant serve/.test(mcpHint)), `${mcpUrl}: ${mcpHint}`)

  // a commit without the digest the reviewer saw is refused, naming the field, in both forms
  for (const args of [
    { plan_id: plan.plan_id, idempotency_key: randomUUID() },
    { plan_id: plan.plan_id, expected_digest: '', idempotency_key: randomUUID() },
    { selection_id: selection.selection_id, resource: 'subscriptions', action: { type: 'pause_collection', params: { reason: 'payment failed (MCP test)' } }, idempotency_key: randomUUID() },
  ]) {
    const refused = await callTool(client, 'commit_change', args)
    assertRefused(refused, 'invalid_request')
    assert.match(refused.structuredContent.error.message, /expected_digest/)
  }
  assert.equal((await asAgent('GET', `/v1/plans/${plan.plan_id}`)).body.state, 'approved', 'the refused commits committed nothing')

  // a wrong digest is refused even once approved
  assertRefused(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: `sha256:${'0'.repeat(64)}`, idempotency_key: randomUUID() }), 'digest_mismatch')

  // commit, then read the operation until it is finished
  const key = randomUUID()
  const committed = await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: key })
  const receipt = assertAnswered(committed)
  assert.equal(receipt.created, true)
  assert.equal(receipt.target_count, plan.target_count)
  assert.match(text(committed), /^COMMITTED: operation /)
  const replay = assertAnswered(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: key }))
  assert.equal(replay.operation_id, receipt.operation_id, 'the same key names the same operation')
  assert.equal(replay.created, false)

  let operation: any
  for (let i = 0; i < 30; i++) {
    const read = await callTool(client, 'get_operation', { operation_id: receipt.operation_id, wait_ms: 2000 })
    operation = assertAnswered(read)
    if (['succeeded', 'completed_with_skips', 'completed_with_unknown', 'partially_failed', 'failed', 'halted'].includes(operation.state)) {
      assert.match(text(read), /^FINISHED \(/)
      break
    }
    assert.match(text(read), /^NOT FINISHED \(/)
  }
  assert.ok(['succeeded', 'completed_with_skips'].includes(operation.state), `finished: ${operation.state}`)
  assert.equal(operation.counts.succeeded + operation.counts.skipped, plan.target_count)
  assert.ok(operation.counts.succeeded > 0)
  assertSameAsHttp(operation, (await asAgent('GET', `/v1/operations/${receipt.operation_id}`)).body)
  const succeeded = assertAnswered(await callTool(client, 'get_operation', { operation_id: receipt.operation_id, part: 'results', outcome: 'succeeded', limit: 1000 }))
  assert.equal(succeeded.results.length, operation.counts.succeeded)
  assert.ok(succeeded.results.every((r: any) => r.outcome === 'succeeded' && r.after.collection === 'paused'))

  // the plan is spent: committing it again under a new key is refused
  const again = await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: randomUUID() })
  assert.equal(again.isError, true)

  return { operation, plan, selection }
}

/** The official MCP client, connected to the world's /mcp endpoint as its agent. */
export async function connectAgent(world: McpWorld, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${world.agentToken}` } } }))
  return client
}

/**
 * A raw JSON-RPC POST to the world's /mcp as its agent, the body sent as written (a literal JSON.stringify could
 * not write, a key given twice): the HTTP response, unread.
 */
export function postMcpText(world: McpWorld, body: string): Promise<Response> {
  return fetch(`${world.fx.base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.agentToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  })
}

/**
 * `warrant mcp` over stdio as a real subprocess, as the world's agent, spoken to in raw lines (sent as written), and
 * already initialised: `answer(id)` waits for the message with that id; `lines` holds every message read so far;
 * `end()` closes stdin and waits for the exit.
 */
export async function startMcpLineSession(
  world: McpWorld,
): Promise<{ send(text: string): void; sendBytes(line: Uint8Array): void; answer(id: number): Promise<any>; end(): Promise<void>; readonly lines: any[] }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', world.configPath], {
    env: { ...process.env, WARRANT_TOKEN: world.agentToken, WARRANT_LOG_LEVEL: 'silent' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const lines: any[] = []
  let buffer = ''
  const waiters: (() => void)[] = []
  // decoded as one stream: a chunk may end inside a character
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk
    for (let i; (i = buffer.indexOf('\n')) >= 0; ) {
      lines.push(JSON.parse(buffer.slice(0, i)))
      buffer = buffer.slice(i + 1)
      waiters.splice(0).forEach((w) => w())
    }
  })
  // a server that dies fails the wait for its answer at once, rather than at the test's timeout
  let exit: string | null = null
  child.once('exit', (code, signal) => {
    exit = `warrant mcp exited (code ${code}, signal ${signal})`
    waiters.splice(0).forEach((w) => w())
  })
  const answer = async (id: number) => {
    for (;;) {
      const found = lines.find((l) => l.id === id)
      if (found) return found
      if (exit) throw new Error(`${exit} before answering id ${id}`)
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  const send = (text: string) => void child.stdin.write(`${text}\n`)
  // a line as bytes, which a string cannot hold when they are not UTF-8
  const sendBytes = (line: Uint8Array) => void child.stdin.write(Buffer.concat([line, Buffer.from('\n')]))
  const end = async () => {
    child.stdin.end()
    if (!exit) await new Promise((resolve) => child.once('exit', resolve))
  }
  try {
    send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }))
    await answer(1)
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  } catch (error) {
    await end()
    throw error
  }
  return { send, sendBytes, answer, end, lines }
}

/** The official client driving `warrant mcp` as a real subprocess, collecting its stderr and any protocol error. */
export async function connectStdio(world: McpWorld, token: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', world.configPath],
    env: { ...(process.env as Record<string, string>), WARRANT_TOKEN: token, WARRANT_LOG_LEVEL: 'info' },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const errors: Error[] = []
  const client = new Client({ name: 'warrant-stdio-test', version: '1.0.0' })
  client.onerror = (error) => errors.push(error)
  await client.connect(transport)
  return { client, errors, stderr: () => stderr }
}

/** The seq of the last audit row written so far (0 for none). */
export async function lastAuditSeq(world: McpWorld): Promise<number> {
  return Number((await world.fx.gateway.store.db.selectFrom('audit_events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst())?.m ?? 0)
}

/** The `mcp` surface's audit rows after `seq`, in chain order, each summary parsed. */
export async function mcpRowsAfter(world: McpWorld, seq: number): Promise<any[]> {
  const rows = await world.fx.gateway.store.db.selectFrom('audit_events').selectAll().where('seq', '>', seq).where('surface', '=', 'mcp').orderBy('seq').execute()
  return rows.map((r) => ({ ...r, summary: JSON.parse(r.summary) }))
}

/** How `child` ended, or `still running` once `ms` have passed without it ending. */
export function exitOf(child: ChildProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode })
    const timer = setTimeout(() => resolve('still running'), ms)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal })
    })
  })
}
