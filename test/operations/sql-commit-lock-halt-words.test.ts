import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { ensureDemoData } from '../../src/demo/index.js'
import { createTempDir } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { holdSqliteWriteLock, sqliteUpstreamGateway } from './support/sqlite-lock-holder.js'

const HOLD = { type: 'hold' }
const HTTP_WORDS = /429|Retry-After|asked to (wait|try again)|answered "not now"|rate limited\)/

/**
 * A SQLite upstream in a rollback journal, its table with an UPDATE trigger (so a write is BEGIN IMMEDIATE, UPDATE,
 * its row read again, COMMIT), and another connection reading (a SHARED lock held): the UPDATE goes through and its
 * COMMIT is refused, SQLite busy, past the connector's statement_timeout_ms. A lock refused at COMMIT proves nothing
 * of whether the transaction committed (errors.ts CommitFailedError): the target is retried, and when the operation
 * halts on those retries (rate_limit_retries) it turns unknown, `rate_limited_halted`. Its words, reason and error,
 * said it "was sent and answered 429 (rate limited)", and the error quoted the connector's "nothing was written,
 * retried": no 429 exists there, and at COMMIT that nothing was written is not proven. Both now say the COMMIT was
 * refused for a lock and that the database may or may not have committed it: reconcile.
 */
describe('a sql write whose COMMIT is refused for a lock until the operation halts', () => {
  test('the target is unknown, said as a COMMIT refused for a lock that may or may not have committed, never a 429', { timeout: 180_000 }, async () => {
    const dir = await createTempDir('warrant-commit-lock-')
    const file = join(dir.path, 'upstream.db')
    await ensureDemoData({ url: `sqlite:${file}`, count: 30 })
    const db = new BetterSqlite3(file)
    db.pragma('journal_mode = DELETE')
    db.exec(`create trigger subscriptions_touch after update on subscriptions begin select 1; end`)
    const id = (db.prepare("select id from subscriptions where status = 'past_due' order by id limit 1").get() as { id: string }).id
    db.close()
    const fx = await sqliteUpstreamGateway(file, { statement_timeout_ms: 1000 })
    const reader = holdSqliteWriteLock(file, 'BEGIN; SELECT count(*) FROM subscriptions')
    try {
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { id: { in: [id] } } }, HOLD)
      await reader.held
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'commit-lock-halt' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id, 150_000)
      const [target] = await allResults(agent, operation.operation_id)
      assert.equal(operation.rate_limit_kind, 'database_lock')
      assert.equal(operation.halt_reason?.rule, 'rate_limit_retries', JSON.stringify({ operation, target }))
      assert.deepEqual([target.outcome, target.reason], ['unknown', 'rate_limited_halted'], JSON.stringify(target))
      for (const words of [target.reason_text, target.error]) {
        assert.doesNotMatch(words, HTTP_WORDS, words)
        assert.doesNotMatch(words, /nothing was written/, words)
        assert.match(words, /COMMIT/, words)
        assert.match(words, /may or may not have committed it: reconcile/, words)
      }
      assert.match(target.error, /database is locked/, 'the connector\'s own words stay quoted')
    } finally {
      await reader.terminate()
      await fx.close()
      await dir.drop()
    }
  })
})
