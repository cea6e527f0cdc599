import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { renderOperation } from '../../src/cli/commands/operation.js'
import { ensureDemoData } from '../../src/demo/index.js'
import { operationSummary } from '../../src/mcp/tools/operations.js'
import { pausedTitle, rateLimitedText } from '../../src/ui/pages/operation.js'
import { createTempDir } from '../support/stores.js'
import { selectProposeApprove, waitForOperation } from './support/flow.js'
import { holdSqliteWriteLock, sqliteUpstreamGateway } from './support/sqlite-lock-holder.js'

const HOLD = { type: 'hold' }
const HTTP_WORDS = /429|Retry-After|asked to wait|answered "not now"/

/**
 * An operation on a sql resource whose write waited on a lock (SQLite busy: another connection held the file's write
 * lock past the busy timeout) was said, by `warrant operation show`, MCP get_operation and the page's pause notice,
 * to have met a 429 or a 503 with Retry-After ("the upstream asked to wait"): no such answer exists there. The
 * operation now records what its upstream's waits are (`rate_limit_kind`, from the resource's kind at commit), and
 * every surface says them in the database's terms. The HTTP wording is pinned in rate-limit-hits-shown.test.ts and
 * halt-after-applied-429.test.ts. A real SQLite upstream, its lock held by a worker thread.
 */
describe('a sql resource\'s lock waits are said as such on every surface, never as a 429 or Retry-After', () => {
  test('SQLite busy: the paused and the finished operation, on HTTP, the CLI, MCP and the page', { timeout: 120_000 }, async () => {
    const dir = await createTempDir('warrant-lock-words-')
    const file = join(dir.path, 'upstream.db')
    await ensureDemoData({ url: `sqlite:${file}`, count: 30 })
    const fx = await sqliteUpstreamGateway(file)
    const holder = holdSqliteWriteLock(file)
    const held = holder.held
    try {
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { status: 'past_due' } }, HOLD)
      await held
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'lock-words' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const id = commit.body.operation_id as string
      let paused: any = null
      for (const deadline = Date.now() + 60_000; ; ) {
        assert.ok(Date.now() < deadline, 'the operation did not pause in 60 s')
        const view = (await agent('GET', `/v1/operations/${id}`)).body
        if (view.paused) {
          paused = view
          break
        }
        assert.ok(!['succeeded', 'halted', 'failed', 'partially_failed', 'completed_with_unknown', 'completed_with_skips'].includes(view.state), JSON.stringify(view))
        await new Promise((r) => setTimeout(r, 20))
      }
      await holder.release()
      const done = await waitForOperation(agent, id, 60_000)
      assert.equal(done.state, 'succeeded', JSON.stringify(done))
      assert.ok(done.rate_limit_hits >= 1, JSON.stringify(done))

      // the view says, as data, what its waits were
      assert.equal(paused.rate_limit_kind, 'database_lock')
      assert.equal(done.rate_limit_kind, 'database_lock')
      const results = (await agent('GET', `/v1/operations/${id}/results`)).body
      assert.equal(results.rate_limit_kind, 'database_lock')

      // the paused operation: the CLI's and MCP's lines, and the page's notice title
      const pausedLines = [renderOperation(paused), operationSummary(paused), pausedTitle(paused)]
      for (const text of pausedLines) {
        assert.doesNotMatch(text, HTTP_WORDS, text)
        assert.match(text, /database/i, text)
      }
      assert.match(renderOperation(paused), /PAUSED until \S+: the database was busy/, renderOperation(paused))
      // the connector's own words stay quoted
      assert.match(renderOperation(paused), /database is locked/, renderOperation(paused))

      // the finished operation: its total of waits
      for (const text of [renderOperation(done), operationSummary(done), rateLimitedText(done)]) {
        assert.doesNotMatch(text, HTTP_WORDS, text)
        assert.match(text, /lock/, text)
      }
      assert.match(renderOperation(done), /lock waits: the database held a lock past the time limit/, renderOperation(done))
      assert.match(operationSummary(done), /rolled back \(nothing written\), waited out and asked again/, operationSummary(done))
      assert.match(rateLimitedText(done), /rolled back, nothing written, and retried after a pause/, rateLimitedText(done))
    } finally {
      await holder.terminate()
      await fx.close()
      await dir.drop()
    }
  })
})
