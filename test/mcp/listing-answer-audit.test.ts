import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { parseConfig } from '../../src/config/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { docsResourceConfig, seedDoc, startDocsUpstream, type DocsUpstream } from '../operations/support/docs-upstream.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTempDir, createTestPostgresDatabase, STORE_KINDS, type TempDir, type TestDatabase } from '../support/stores.js'
import { assertAnswered, callTool, connectStdio, type McpWorld } from './support.js'

// An MCP tool that answers a listing leaves a row that says what the agent was answered, as the HTTP API's row
// does (the same `answer` summary: items, complete, the reason codes; a page says whether more followed), so a
// reviewer reading the audit can tell an agent that acted on a cut listing whichever surface it used. Driven by
// the official MCP client over `warrant mcp` in a real subprocess, against HTTP upstreams unlike the demo: one
// list that fails after two pages, and a CouchDB-like one that takes writes; on both stores.

const PAGE = 100
const FAIL_AT = 2 * PAGE

/** docs-shaped records, paged by cursor, answering 503 from the third page on. */
function flakyPage(res: Parameters<Parameters<typeof startUpstream>[0]>[1], url: URL) {
  const from = Number(url.searchParams.get('cursor') || 0)
  const limit = Number(url.searchParams.get('limit') ?? PAGE)
  if (from >= FAIL_AT) return sendJson(res, 503, { error: 'shard offline' })
  const items = Array.from({ length: limit }, (_, k) => ({ ...seedDoc(from + k + 1), _id: `f-${String(from + k + 1).padStart(5, '0')}` }))
  sendJson(res, 200, { items, next_cursor: String(from + limit) })
}

for (const kind of STORE_KINDS) {
  describe(`the audit row of an MCP listing says what the agent was answered (${kind} store, stdio subprocess, HTTP upstreams)`, () => {
    let flaky: TestUpstream
    let docs: DocsUpstream
    let dir: TempDir
    let pgDb: TestDatabase | null = null
    let gw: Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>
    let configPath: string
    let client: Client
    let closeClient: () => Promise<void>

    before(async () => {
      flaky = await startUpstream(async (req, res) => (req.url.pathname === '/docs' ? flakyPage(res, req.url) : sendJson(res, 404, { error: 'no such list' })))
      docs = await startDocsUpstream(6)
      dir = await createTempDir('warrant-mcp-listing-audit-')
      if (kind === 'postgres') pgDb = await createTestPostgresDatabase()
      const write = { path: '/docs/{id}', body: { status: '{{set.status}}' } }
      const raw = {
        store: pgDb ? pgDb.url : `sqlite:${join(dir.path, 'warrant.db')}`,
        audit: { key: { file: join(dir.path, 'audit.key'), create: true } },
        resources: { flaky: docsResourceConfig(flaky.origin, write), docs: docsResourceConfig(docs.origin, write) },
      }
      configPath = join(dir.path, 'warrant.json')
      writeFileSync(configPath, JSON.stringify(raw, null, 2))
      gw = await startGatewayOn(parseConfig(raw, 'test config'), { resources: ['flaky', 'docs'] })
      const connected = await connectStdio({ configPath } as McpWorld, gw.tokens.agent)
      client = connected.client
      closeClient = () => client.close()
    })
    after(async () => {
      await closeClient?.()
      await gw?.close()
      await flaky?.close()
      await docs?.close()
      await pgDb?.drop()
      await dir?.drop()
    })

    /** The last run row of this tool, read straight from the store (the subprocess wrote it before answering). */
    const lastRow = async (tool: string) => {
      const row = await gw.gateway.store.db.selectFrom('audit_events').select(['summary']).where('level', '=', 'run').where('action', '=', `mcp:${tool}`).orderBy('seq', 'desc').limit(1).executeTakeFirst()
      assert.ok(row, `mcp:${tool} has its row`)
      return JSON.parse(row.summary)
    }
    const codes = (answer: { incomplete_reasons: { code: string }[] }) => [...new Set(answer.incomplete_reasons.map((r) => r.code))]

    it('a search cut by a failing upstream: the row says incomplete, with the codes, as the HTTP row does', async () => {
      const envelope = assertAnswered(await callTool(client, 'search', { resource: 'flaky', filter: {}, page_size: PAGE, budget: { max_items: 1000 } }))
      assert.equal(envelope.items.length, FAIL_AT)
      assert.equal(envelope.complete, false)
      const row = await lastRow('search')
      assert.equal(row.outcome, 'ok')
      assert.deepEqual(row.answer, { items: FAIL_AT, complete: false, incomplete: codes(envelope) })
      assert.ok(row.answer.incomplete.length > 0)
      // the same search over HTTP keeps the same summary
      const http = await gw.as('agent')('POST', '/v1/resources/flaky/search', { filter: {}, page_size: PAGE, budget: { max_items: 1000 } })
      await gw.gateway.audit.flush()
      const httpRow = await gw.gateway.store.db.selectFrom('audit_events').select(['summary']).where('action', '=', 'POST /v1/resources/:resource/search').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
      assert.deepEqual(JSON.parse(httpRow.summary).answer, { ...row.answer, incomplete: codes(http.body) })
    })

    it('a walk continued with its cursor: the continuing call row says what that part answered', async () => {
      const first = assertAnswered(await callTool(client, 'search', { resource: 'flaky', filter: {}, page_size: PAGE, budget: { max_pages: 1 } }))
      assert.deepEqual((await lastRow('search')).answer, { items: PAGE, complete: false, incomplete: ['CLIENT_LIMIT_REACHED'] })
      const next = assertAnswered(await callTool(client, 'search', { resource: 'flaky', filter: {}, page_size: PAGE, budget: { max_pages: 5 }, cursor: first.continuation.cursor }))
      assert.equal(next.complete, false)
      assert.deepEqual((await lastRow('search')).answer, { items: next.items.length, complete: false, incomplete: codes(next) })
    })

    it('an incomplete selection, its member pages, its excluded pages and its plan\'s changes: each row says not complete, and whether a page followed', async () => {
      const selection = assertAnswered(await callTool(client, 'create_selection', { resource: 'flaky', filter: {}, exclude: [{ rule: 'gold', filter: { name: 'Doc 3' } }] }))
      assert.equal(selection.complete, false)
      const incomplete = codes(selection)
      assert.deepEqual((await lastRow('create_selection')).answer, { items: selection.records.length, complete: false, incomplete, next_page: selection.next_cursor !== null })
      assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id }))
      assert.deepEqual((await lastRow('read_selection')).answer, { items: selection.records.length, complete: false, incomplete, next_page: selection.next_cursor !== null })
      const page = assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id, part: 'records', limit: 50 }))
      assert.deepEqual((await lastRow('read_selection')).answer, { items: 50, complete: false, incomplete, next_page: true })
      const last = assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id, part: 'records', limit: 1000, cursor: page.next_cursor }))
      assert.deepEqual((await lastRow('read_selection')).answer, { items: last.records.length, complete: false, incomplete, next_page: false })
      assertAnswered(await callTool(client, 'read_selection', { selection_id: selection.selection_id, part: 'excluded', rule: 'gold' }))
      assert.deepEqual((await lastRow('read_selection')).answer, { items: 1, complete: false, incomplete, next_page: false })
      const plan = assertAnswered(await callTool(client, 'propose_change', { selection_id: selection.selection_id, action: { type: 'set_status', params: { status: 'archived' } } }))
      assert.equal((await lastRow('propose_change')).answer, undefined, 'a plan is no listing')
      const changes = assertAnswered(await callTool(client, 'get_plan', { plan_id: plan.plan_id, part: 'changes', limit: 10 }))
      assert.deepEqual((await lastRow('get_plan')).answer, { items: changes.changes.length, complete: false, incomplete, next_page: true })
      assertAnswered(await callTool(client, 'get_plan', { plan_id: plan.plan_id }))
      assert.equal((await lastRow('get_plan')).answer, undefined, "a plan's overview is no listing")
    })

    it("an operation's results: a page of per-target outcomes says how many and whether more followed", async () => {
      const selection = assertAnswered(await callTool(client, 'create_selection', { resource: 'docs', filter: {} }))
      assert.deepEqual((await lastRow('create_selection')).answer, { items: 6, complete: true, incomplete: [], next_page: false })
      const action = { type: 'set_status', params: { status: 'archived' } }
      const plan = assertAnswered(await callTool(client, 'propose_change', { selection_id: selection.selection_id, action }))
      for (const who of (['reviewer', 'reviewer2'] as const).slice(0, Math.max(1, plan.approval.reviewers_needed))) {
        const approval = await gw.as(who)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        assert.equal(approval.status, 201, JSON.stringify(approval.body))
      }
      const receipt = assertAnswered(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: randomUUID() }))
      let operation: any
      for (let i = 0; i < 30 && !['succeeded', 'completed_with_skips', 'failed', 'halted', 'partially_failed'].includes(operation?.state); i++)
        operation = assertAnswered(await callTool(client, 'get_operation', { operation_id: receipt.operation_id, wait_ms: 2000 }))
      assert.equal(operation.state, 'succeeded', JSON.stringify(operation.counts))
      assert.equal((await lastRow('get_operation')).answer, undefined, "an operation's overview is no listing")
      assertAnswered(await callTool(client, 'get_operation', { operation_id: receipt.operation_id, part: 'results', limit: 4 }))
      assert.deepEqual((await lastRow('get_operation')).answer, { items: 4, next_page: true })
      const verify = await gw.as('admin')('GET', '/v1/audit/verify')
      assert.equal(verify.body.ok, true, JSON.stringify(verify.body))
    })
  })
}
