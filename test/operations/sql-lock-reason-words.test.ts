import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { runWarrant } from '../support/cli-config.js'
import { pagePart, reviewPageHtml, textOf } from '../support/review-page.js'
import { callTool, connectAgent, startMcpWorld, text, type McpWorld } from '../mcp/support.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'

/** An http upstream's "not now": none exists on a sql resource. */
const HTTP_WORDS = /429|Retry-After|asked to (wait|try again)|answered "not now"|rate limited\)/

/**
 * What a sql resource's target met, by reason, in its database's terms: a lock refused while the statement ran
 * (rolled back, proven: nothing written), or at COMMIT (errors.ts CommitFailedError: whether it committed is not
 * proven, so never "nothing written").
 */
const SAID: ReadonlyArray<readonly [outcome: string, reason: string, words: RegExp]> = [
  ['pending', 'rate_limited', /^waiting: the database did not grant a lock in time .*rolled the write back; nothing was written yet/],
  ['pending', 'rate_limited', /^waiting: its write was sent and its COMMIT refused for a lock .*does not prove the database did not commit it/],
  ['unknown', 'rate_limited_halted', /^its write was sent and its COMMIT refused for a lock, and not retried: the operation halted first; the database may or may not have committed it: reconcile/],
  ['unknown', 'rate_limited_applied', /^a write whose COMMIT was refused for a lock was not sent again: .*may have been committed; reconcile/],
]

/**
 * The operation-level words of a sql resource's waits were made the database's (sql-lock-wait-words.test.ts), but
 * each target's reason in words (HTTP `reason_text`, `warrant operation results`, MCP get_operation results, the
 * review page) still said an http upstream's: "the upstream asked to try again later", "its write was sent and
 * answered 429 (rate limited)". On a sql resource no 429 exists, and a lock refused at COMMIT does not prove, as
 * those words did, that the upstream did not apply it. Each is now said from the operation's `rate_limit_kind`
 * (wait-words.ts `reasons`), the one source the operation's own words come from. The operation is real (a SQLite
 * upstream, a sql resource); its four ledger rows are then given the reasons a lock refusal records (the executor
 * tests prove those outcomes: sqlite-busy, sql-lock-halt, halt-after-applied-429, rate-limited-write-applied).
 */
describe("a sql resource's per-target reasons of a lock wait say the database's words, never a 429", () => {
  let world: McpWorld
  let operationId = ''
  before(async () => {
    world = await startMcpWorld({ count: 60 })
    const agent = caller(world.fx.base, world.agentToken)
    const action = { type: 'pause_collection', params: { reason: 'x' } }
    const upstream = new BetterSqlite3(world.fx.upstreamUrl.slice('sqlite:'.length))
    const ids = (upstream.prepare("select id from subscriptions where status = 'past_due' and collection = 'active' order by id limit 4").all() as { id: string }[]).map((r) => r.id)
    upstream.close()
    assert.equal(ids.length, 4)
    const { selection } = await selectProposeApprove(agent, [world.fx.as('reviewer'), world.fx.as('reviewer2')], 'subscriptions', { filter: { id: { in: ids } } }, action)
    const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'lock-reasons' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operation = await waitForOperation(agent, commit.body.operation_id)
    assert.equal(operation.rate_limit_kind, 'database_lock')
    operationId = operation.operation_id
    const store = new BetterSqlite3(world.fx.storeUrl.slice('sqlite:'.length))
    const set = store.prepare('update operation_targets set state = ?, reason = ?, error = ?, rate_limit_hits = 1 where operation_id = ? and ord = ?')
    const busy = 'database is locked (the write lock was not obtained in time)'
    set.run('pending', 'rate_limited', JSON.stringify({ message: busy }), operationId, 1)
    set.run('pending', 'rate_limited', JSON.stringify({ message: busy, write_sent: true }), operationId, 2)
    set.run('unknown', 'rate_limited_halted', JSON.stringify({ message: busy }), operationId, 3)
    set.run('unknown', 'rate_limited_applied', JSON.stringify({ message: busy }), operationId, 4)
    store.close()
  })
  after(() => world?.close())

  test('HTTP results: reason_text in the database\'s words', async () => {
    const results = await allResults(caller(world.fx.base, world.agentToken), operationId)
    assert.deepEqual(results.map((r) => [r.outcome, r.reason]), SAID.map(([o, r]) => [o, r]))
    results.forEach((r, i) => {
      assert.doesNotMatch(r.reason_text, HTTP_WORDS, JSON.stringify(r))
      assert.match(r.reason_text, SAID[i]![2], JSON.stringify(r))
    })
  })

  test('warrant operation results: each line says its reason in the database\'s words', async () => {
    const r = await runWarrant(['operation', 'results', operationId, '--config', world.configPath], world.fx.dir)
    assert.equal(r.code, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    SAID.forEach(([, , words], i) => {
      const line = lines.find((l) => new RegExp(`^\\s*${i + 1}\\s`).test(l))
      assert.ok(line, r.stdout)
      assert.doesNotMatch(line, HTTP_WORDS, line)
      assert.match(line, new RegExp(words.source.slice(1)), line)
    })
  })

  test('MCP get_operation results: the reasons in the database\'s words', async () => {
    const client = await connectAgent(world, 'lock-reasons')
    try {
      const said = text(await callTool(client, 'get_operation', { operation_id: operationId, part: 'results' }))
      assert.doesNotMatch(said, HTTP_WORDS, said)
      for (const [, , words] of SAID) assert.match(said, new RegExp(words.source.slice(1)), said)
    } finally {
      await client.close()
    }
  })

  test('the review page: each target\'s reason in the database\'s words', async () => {
    const html = await reviewPageHtml(world.fx, `/review/operations/${operationId}`)
    const targets = textOf(pagePart(html, 'targets'))
    assert.doesNotMatch(targets, HTTP_WORDS, targets)
    for (const [, , words] of SAID) assert.match(targets, new RegExp(words.source.slice(1)), targets)
  })
})
