import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { runWarrant } from '../support/cli-config.js'
import { reviewPage } from '../support/review-page.js'
import { callTool, startMcpWorld, text, type McpWorld } from '../mcp/support.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'

/** What each surface must say for each way a target failed, beside its code. */
const SAID: Record<string, RegExp> = {
  rejected: /refused: the upstream judged this write and said no, or a database write read back before COMMIT was not as approved/,
  not_sent: /never sent: the upstream could not be reached/,
  rolled_back: /sent, then rolled back: the database received the write but never committed it/,
}

/**
 * A target `failed` for three different reasons: the upstream refused the write (`rejected`), it was never sent
 * (`not_sent`: no connection), it was sent and never committed (`rolled_back`). Every surface showed the code
 * alone (HTTP `reason`, the CLI's result line, the review page's small print) or not even that (the MCP results
 * text counted outcomes only): a reviewer had to know the codes to tell a refusal from a write that never left.
 * Each now says it in words, beside the code (HTTP `reason_text`). The operation is real (a SQLite trigger
 * refuses three writes); two of its ledger rows are then given the reasons a lost connection records (the
 * connector tests prove those outcomes: unreachable-database, lost-before-commit).
 */
describe('failed reasons are told apart, in words, on every surface', () => {
  let world: McpWorld
  let operationId = ''
  before(async () => {
    world = await startMcpWorld({ count: 60 })
    const upstream = new BetterSqlite3(world.fx.upstreamUrl.slice('sqlite:'.length))
    const ids = (upstream.prepare("select id from subscriptions where status = 'past_due' and collection = 'active' order by id limit 3").all() as { id: string }[]).map((r) => r.id)
    assert.equal(ids.length, 3)
    for (const id of ids) upstream.prepare("update subscriptions set tenant = 'probe' where id = ?").run(id)
    upstream.exec(`create trigger refuse before update on subscriptions when old.tenant = 'probe' begin select raise(abort, 'amount frozen by finance'); end`)
    upstream.close()
    const agent = caller(world.fx.base, world.agentToken)
    const action = { type: 'pause_collection', params: { reason: 'x' } }
    const { selection } = await selectProposeApprove(agent, [world.fx.as('reviewer'), world.fx.as('reviewer2')], 'subscriptions', { filter: { tenant: 'probe' } }, action)
    const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'reasons' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operation = await waitForOperation(agent, commit.body.operation_id)
    assert.equal(operation.counts.failed, 3, JSON.stringify(operation))
    operationId = operation.operation_id
    const store = new BetterSqlite3(world.fx.storeUrl.slice('sqlite:'.length))
    const set = store.prepare('update operation_targets set reason = ?, error = ? where operation_id = ? and ord = ?')
    set.run('not_sent', JSON.stringify({ message: 'the database could not be reached (connect ECONNREFUSED): no statement was sent, so nothing was written' }), operationId, 2)
    set.run('rolled_back', JSON.stringify({ message: 'Connection lost (the UPDATE was sent, but its transaction was never committed: it was rolled back, so nothing was written)' }), operationId, 3)
    store.close()
  })
  after(() => world?.close())

  test('HTTP results: reason_text says it beside the code', async () => {
    const results = await allResults(caller(world.fx.base, world.agentToken), operationId, 'failed')
    assert.deepEqual(results.map((r) => r.reason), ['rejected', 'not_sent', 'rolled_back'])
    for (const r of results) assert.match(r.reason_text ?? '', SAID[r.reason]!, JSON.stringify(r))
  })

  test('MCP get_operation results: the text tells each reason apart, in words', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${world.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${world.agentToken}` } } })
    const client = new Client({ name: 'reasons-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const said = text(await callTool(client, 'get_operation', { operation_id: operationId, part: 'results' }))
      for (const [code, words] of Object.entries(SAID)) {
        assert.match(said, new RegExp(`\\b${code}\\b`), said)
        assert.match(said, words, said)
      }
    } finally {
      await client.close()
    }
  })

  test('warrant operation results: each line says its reason in words', async () => {
    const r = await runWarrant(['operation', 'results', operationId, '--config', world.configPath], world.fx.dir)
    assert.equal(r.code, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    for (const [code, words] of Object.entries(SAID)) {
      const line = lines.find((l) => new RegExp(`\\b${code}\\b`).test(l))
      assert.ok(line, `${code}: ${r.stdout}`)
      assert.match(line, words, line)
    }
  })

  test('the review page: each failed target says its reason in words', async () => {
    const page = await reviewPage(world.fx, `/review/operations/${operationId}?outcome=failed`)
    for (const words of Object.values(SAID)) assert.match(page, words)
  })
})
