import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { INLINE_JSON_MAX_BYTES } from '../../src/mcp/results.js'
import { MCP_SEARCH_DEFAULT_MAX_ITEMS } from '../../src/mcp/tools/resources.js'
import { assertAnswered, assertRefused, callTool, type McpWorld, startMcpWorld, text, TOOL_NAMES } from './support.js'

/** What an agent may spend of its context before its first call: initialize + tools/list, as JSON. */
// 16 KiB for nine tools; the tenth (propose_remainder, ~700 B) moved it to 18 KiB (stop 42): the cap stops growth, it is not a target
const CONTEXT_BUDGET_BYTES = 18 * 1024

async function connect(world: McpWorld, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'warrant-budget-test', version: '1.0.0' })
  await client.connect(transport)
  return client
}

/** A raw JSON-RPC POST to /mcp: the exact bytes a client receives. */
async function post(world: McpWorld, body: unknown, headers: Record<string, string> = {}): Promise<{ text: string; json: any }> {
  const response = await fetch(`${world.fx.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${world.agentToken}`, ...headers },
    body: JSON.stringify(body),
  })
  const raw = await response.text()
  assert.equal(response.status, 200, raw.slice(0, 400))
  return { text: raw, json: JSON.parse(raw) }
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

/** Every `properties` entry anywhere in a JSON Schema (definitions too), with its path. */
function propertiesOf(schema: unknown, path: string, out: { path: string; schema: any }[] = []): { path: string; schema: any }[] {
  if (Array.isArray(schema)) schema.forEach((s, i) => propertiesOf(s, `${path}/${i}`, out))
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && value && typeof value === 'object')
        for (const [name, property] of Object.entries(value)) {
          out.push({ path: `${path}/properties/${name}`, schema: property })
          propertiesOf(property, `${path}/properties/${name}`, out)
        }
      else propertiesOf(value, `${path}/${key}`, out)
    }
  }
  return out
}

describe("an agent's budget over MCP (official client, real HTTP, the demo-sized resource)", () => {
  let world: McpWorld
  // The in-process gateway's clock runs with real time plus `skew`: the expiry test moves it past an approval's
  // TTL instead of waiting or editing rows.
  let skew = 0
  before(async () => {
    world = await startMcpWorld({ count: 10_000, clock: () => new Date(Date.now() + skew) })
  })
  after(async () => {
    await world?.close()
  })

  test('initialize + tools/list fit in 18 KB; the capabilities claim no list_changed notifications', async () => {
    const init = await post(world, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'measure', version: '0' } } })
    const headers = { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
    const list = await post(world, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, headers)
    const initBytes = bytes(init.json.result)
    const listBytes = bytes(list.json.result)
    console.log(`context before the first call: initialize ${initBytes} B + tools/list ${listBytes} B = ${initBytes + listBytes} B (budget ${CONTEXT_BUDGET_BYTES} B)`)
    assert.ok(initBytes + listBytes < CONTEXT_BUDGET_BYTES, `${initBytes + listBytes} bytes`)
    assert.deepEqual(list.json.result.tools.map((t: any) => t.name), [...TOOL_NAMES])
    // the full rules travel once, in the instructions
    assert.match(init.json.result.instructions, /empty result proves absence only when `complete` is true/)
    assert.deepEqual(init.json.result.capabilities, { tools: {} }, 'no listChanged: this server never sends notifications/tools/list_changed')
  })

  test('every input property of every tool has a description', async () => {
    const client = await connect(world, world.agentToken)
    try {
      const { tools } = await client.listTools()
      let checked = 0
      for (const tool of tools)
        for (const { path, schema } of propertiesOf(tool.inputSchema, tool.name)) {
          assert.equal(typeof schema.description, 'string', `${path} has no description`)
          assert.ok(schema.description.length > 0, `${path} has an empty description`)
          checked++
        }
      for (const name of ['search/properties/filter', 'search/properties/budget', 'search/properties/budget/properties/max_items', 'propose_change/properties/action', 'commit_change/properties/action'])
        assert.ok(
          tools.some((t) => propertiesOf(t.inputSchema, t.name).some((p) => p.path === name)),
          `${name} is among the properties checked`,
        )
      assert.ok(checked > 50, `${checked} properties checked`)
    } finally {
      await client.close()
    }
  })

  test('a search without a budget stops at the default item budget with CLIENT_LIMIT_REACHED; its cursor continues; the text does not repeat the records', { timeout: 60_000 }, async () => {
    const client = await connect(world, world.agentToken)
    try {
      const first = await callTool(client, 'search', { resource: 'subscriptions' })
      const envelope = assertAnswered(first)
      assert.equal(envelope.items.length, MCP_SEARCH_DEFAULT_MAX_ITEMS)
      assert.equal(envelope.complete, false)
      assert.deepEqual(
        envelope.incomplete_reasons.map((r: any) => [r.code, r.limit]),
        [['CLIENT_LIMIT_REACHED', { name: 'max_items', value: MCP_SEARCH_DEFAULT_MAX_ITEMS }]],
      )
      assert.equal(envelope.continuation.kind, 'next_cursor')
      assert.match(text(first), new RegExp(`^INCOMPLETE \\(CLIENT_LIMIT_REACHED: max_items=${MCP_SEARCH_DEFAULT_MAX_ITEMS}\\)`))

      // sized for a context window, and paid once: the text carries the summary and the cursor, not the records
      const structured = bytes(envelope)
      const texts = first.content.map((c: any) => Buffer.byteLength(c.text))
      console.log(`search without a budget: structuredContent ${structured} B, text blocks ${texts.join(' + ')} B`)
      assert.ok(structured < 32 * 1024, `structuredContent ${structured} B`)
      assert.ok(texts[1]! <= INLINE_JSON_MAX_BYTES, `the JSON text block is ${texts[1]} B`)
      assert.ok(texts.reduce((a: number, b: number) => a + b, 0) < structured / 4, 'the text is not a second copy of the answer')
      const copy = JSON.parse(text(first, 1))
      assert.equal(copy.items, undefined)
      assert.equal(copy.continuation.cursor, envelope.continuation.cursor, 'the text carries the cursor')
      assert.deepEqual(copy.incomplete_reasons, envelope.incomplete_reasons)

      // the cursor continues the same walk: the next items, in order, none repeated
      const second = assertAnswered(await callTool(client, 'search', { resource: 'subscriptions', cursor: envelope.continuation.cursor }))
      assert.equal(second.items.length, MCP_SEARCH_DEFAULT_MAX_ITEMS)
      const http = await world.fx.as('agent')('POST', '/v1/resources/subscriptions/search', { budget: { max_items: 2 * MCP_SEARCH_DEFAULT_MAX_ITEMS } })
      assert.equal(http.status, 200)
      assert.deepEqual(
        [...envelope.items, ...second.items].map((i: any) => i.id),
        http.body.items.map((i: any) => i.id),
        'two MCP parts are the first 200 records of the same walk',
      )
      assert.equal(second.page.walk_returned, 2 * MCP_SEARCH_DEFAULT_MAX_ITEMS)

      // an explicit budget raises it
      const more = assertAnswered(await callTool(client, 'search', { resource: 'subscriptions', budget: { max_items: 250 } }))
      assert.equal(more.items.length, 250)
    } finally {
      await client.close()
    }
  })

  test('a client on a protocol without structuredContent still gets the whole answer as text', async () => {
    const version = '2025-03-26'
    const call = await post(
      world,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { resource: 'subscriptions' } } },
      { 'mcp-protocol-version': version },
    )
    const whole = JSON.parse(call.json.result.content[1].text)
    assert.equal(whole.items.length, MCP_SEARCH_DEFAULT_MAX_ITEMS)
    assert.deepEqual(whole.items, call.json.result.structuredContent.items)
  })

  test("list_resources shows the actions this token may use: only its own for a scoped token, all for '*'", async () => {
    const readOnly = await world.fx.gateway.principals.issue({ name: 'read-only-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: [] } })
    const cases: [string, string, Record<string, string[]>][] = [
      ['scoped to pause_collection', world.agentToken, { subscriptions: ['pause_collection'] }],
      ["actions '*'", world.fx.tokens.agent, { subscriptions: ['pause_collection', 'resume_collection'] }],
      ['no actions', readOnly.token, { subscriptions: [] }],
      ["admin: resources and actions '*'", world.fx.tokens.admin, { subscriptions: ['pause_collection', 'resume_collection'], archive: ['pause_collection', 'resume_collection'] }],
    ]
    for (const [label, token, expected] of cases) {
      const client = await connect(world, token)
      try {
        const listed = await callTool(client, 'list_resources')
        const answer = assertAnswered(listed)
        assert.deepEqual(Object.fromEntries(answer.resources.map((r: any) => [r.name, r.actions.map((a: any) => a.name)])), expected, label)
        for (const [name, actions] of Object.entries(expected))
          assert.match(text(listed), new RegExp(`- ${name} → .*; actions this token may use: ${actions.length ? actions.join(', ') : '\\(none: read only\\)'}`), label)
        const http = await fetch(`${world.fx.base}/v1/resources`, { headers: { authorization: `Bearer ${token}` } })
        assert.deepEqual(await http.json(), answer, `${label}: the same answer as GET /v1/resources`)
      } finally {
        await client.close()
      }
    }
  })

  /** A fresh pending plan of the scoped agent: pause_collection on past-due active records of one region. */
  async function proposePlan(client: Client, region: string): Promise<any> {
    const selection = assertAnswered(await callTool(client, 'create_selection', { resource: 'subscriptions', filter: { status: 'past_due', region, collection: 'active' } }))
    return callTool(client, 'propose_change', { selection_id: selection.selection_id, action: { type: 'pause_collection', params: { reason: `budget test ${region}` } } })
  }

  test('review_url is absolute without server.public_url: where the gateway serving /mcp listens', { timeout: 60_000 }, async () => {
    assert.equal(world.fx.config.server.public_url, undefined)
    const client = await connect(world, world.agentToken)
    try {
      const proposed = await proposePlan(client, 'us')
      const plan = assertAnswered(proposed)
      const reviewUrl = `${world.fx.base}/review/plans/${plan.plan_id}`
      assert.equal(plan.review_url, reviewUrl)
      assert.ok(text(proposed).includes(`review page ${reviewUrl} `), 'the summary gives the link a person can open')
      assert.equal((await world.fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body.review_url, reviewUrl, 'HTTP gives the same link')
    } finally {
      await client.close()
    }
  })

  test('get_plan says when an approval expired, as HTTP does, and a commit is refused as expired', { timeout: 60_000 }, async () => {
    const client = await connect(world, world.agentToken)
    try {
      const plan = assertAnswered(await proposePlan(client, 'eu'))
      assert.equal(plan.approval_state.expired, false)
      const approval = await world.fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      assert.equal(approval.status, 201, JSON.stringify(approval.body))
      const approved = assertAnswered(await callTool(client, 'get_plan', { plan_id: plan.plan_id }))
      assert.equal(approved.state, 'approved')
      assert.equal(approved.approval_state.expired, false)

      // the clock passes the approval's expiry (15 minutes in the demo config; the selection lives 30)
      const lapsedAt = approved.approval_state.approved_by[0].expires_at
      assert.ok(Date.parse(lapsedAt) < Date.parse(approved.selection.expires_at), 'the approval lapses before the selection')
      skew = Date.parse(lapsedAt) - Date.now() + 1000

      const read = await callTool(client, 'get_plan', { plan_id: plan.plan_id })
      const expired = assertAnswered(read)
      assert.equal(expired.state, 'pending', 'the plan itself lives on: a reviewer may approve it again')
      assert.equal(expired.approval_state.approved, false)
      assert.equal(expired.approval_state.expired, true)
      assert.equal(expired.approval_state.expired_at, lapsedAt)
      assert.equal(expired.approval_state.still_needed, 1)
      assert.match(text(read), new RegExp(`APPROVAL EXPIRED at ${lapsedAt.replace(/\./g, '\\.')}`))
      const http = await world.fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
      assert.deepEqual(http.body.approval_state, expired.approval_state, 'HTTP reads the same approval state')

      // and the commit says the same thing
      assertRefused(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: randomUUID() }), 'expired')
    } finally {
      await client.close()
    }
  })
})
