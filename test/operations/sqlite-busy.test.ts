import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import BetterSqlite3 from 'better-sqlite3'
import { ensureDemoData } from '../../src/demo/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { createTempDir } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { holdSqliteWriteLock } from './support/sqlite-lock-holder.js'

const HOLD = { type: 'hold' }

/**
 * Another connection holds the SQLite upstream's write lock (BEGIN IMMEDIATE) past the connector's busy timeout
 * (5 s) as an operation writes. The write came back `rejected` 503, a validation failure toward
 * halt_after_validation_failures, for a write the database never judged: it never got the lock. It is a lock
 * never obtained, as MySQL's lock wait timeout and PostgreSQL's deadlock are: retried after a pause (counted
 * against the target's rate-limit retries), no validation failure. The lock is held by a worker thread (better-
 * sqlite3 waits for a lock synchronously, blocking this thread) until the operation shows its pause; after the
 * pause every target is written, once.
 */
async function holdWhileWriting(options: { readonly trigger: boolean; readonly window?: number }): Promise<void> {
  const dir = await createTempDir('warrant-busy-')
  const file = join(dir.path, 'upstream.db')
  await ensureDemoData({ url: `sqlite:${file}`, count: 30 })
  const db = new BetterSqlite3(file)
  // a trigger that may change the row after the UPDATE: the write is then BEGIN IMMEDIATE, UPDATE, read, COMMIT
  if (options.trigger) db.exec(`create trigger subscriptions_touch after update on subscriptions begin select 1; end`)
  const fx = await startDemoGateway({
    store: 'sqlite',
    count: 1,
    edit: (raw) => {
      raw.resources.subscriptions.connector.url = `sqlite:${file}`
      if (options.window !== undefined) raw.resources.subscriptions.connector.write_window = options.window
      raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
      // one validation failure, or one failure of any kind, would halt
      raw.execution = { halt_after_validation_failures: 1, halt_after_consecutive_errors: 1 }
    },
  })
  const holder = holdSqliteWriteLock(file)
  const held = holder.held
  try {
    const agent = fx.as('agent')
    const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { status: 'past_due' } }, HOLD)
    assert.ok(selection.count >= 2, `${selection.count} past-due records`)
    const before = new Map((db.prepare(`select id, version from subscriptions where status = 'past_due'`).all() as { id: string; version: number }[]).map((r) => [r.id, r.version]))

    await held
    const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'busy' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    // the lock is released once the operation says it paused for it (or it finished: the test then fails below)
    let paused: any = null
    for (const deadline = Date.now() + 60_000; ; ) {
      assert.ok(Date.now() < deadline, 'the operation neither paused nor finished in 60 s')
      const view = (await agent('GET', `/v1/operations/${commit.body.operation_id}`)).body
      if (view.paused || ['succeeded', 'halted', 'failed', 'partially_failed', 'completed_with_unknown', 'completed_with_skips'].includes(view.state)) {
        paused = view.paused
        break
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    await holder.release()
    const operation = await waitForOperation(agent, commit.body.operation_id, 60_000)

    assert.equal(operation.state, 'succeeded', JSON.stringify({ state: operation.state, halt: operation.halt_reason, counts: operation.counts }))
    assert.match(paused?.reason ?? '', /database is locked.*nothing was written, retried/, JSON.stringify(paused))
    assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: selection.count, failed: 0, skipped: 0, unknown: 0 })
    const results = await allResults(agent, operation.operation_id)
    assert.ok(results.every((r) => r.outcome === 'succeeded' && r.reason === null), JSON.stringify(results.find((r) => r.outcome !== 'succeeded')))
    // written once each: the version moved by one, the tags are as approved
    for (const [id, version] of before) {
      const row = db.prepare('select version, tags from subscriptions where id = ?').get(id) as { version: number; tags: string }
      assert.deepEqual([row.version, row.tags], [version + 1, '["on-hold"]'], id)
    }
  } finally {
    await holder.terminate()
    db.close()
    await fx.close()
    await dir.drop()
  }
}

describe('a SQLite upstream whose write lock another connection holds (SQLITE_BUSY)', () => {
  test('a RETURNING write that never got the lock is retried after a pause: every target written once, no validation failure', () => holdWhileWriting({ trigger: false, window: 1 }))
  test('a window whose BEGIN IMMEDIATE never got the lock (an UPDATE trigger) is retried the same way', () => holdWhileWriting({ trigger: true }))
})

/**
 * The read side, as it was already: a walk whose read session cannot begin for the lock (an upstream in rollback
 * journal mode, another connection holding BEGIN EXCLUSIVE) is not complete, SOURCE_UNAVAILABLE with a wait,
 * its continuation a retry: never an error, never an empty answer taken as complete. Pinned here.
 */
describe('a walk over a SQLite upstream another connection holds exclusively', () => {
  test('search and selection: not complete, SOURCE_UNAVAILABLE with retry_after_seconds, a retry continuation', async () => {
    const dir = await createTempDir('warrant-busy-')
    const file = join(dir.path, 'upstream.db')
    await ensureDemoData({ url: `sqlite:${file}`, count: 30 })
    const db = new BetterSqlite3(file)
    db.pragma('journal_mode = DELETE')
    db.close()
    const fx = await startDemoGateway({ store: 'sqlite', count: 1, edit: (raw) => void (raw.resources.subscriptions.connector.url = `sqlite:${file}`) })
    const holder = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads')
       const db = new (require('better-sqlite3'))(workerData)
       db.exec('BEGIN EXCLUSIVE')
       parentPort.postMessage('held')
       parentPort.on('message', () => undefined) // alive, the lock held, until terminated`,
      { eval: true, workerData: file },
    )
    const held = new Promise((resolve) => holder.once('message', resolve))
    try {
      await held
      for (const path of ['/v1/resources/subscriptions/search', '/v1/resources/subscriptions/selections']) {
        const { body } = await fx.as('agent')('POST', path, { filter: {} })
        assert.equal(body.complete, false, JSON.stringify(body))
        assert.deepEqual(body.incomplete_reasons.map((r: any) => [r.code, r.retry_after_seconds > 0]), [['SOURCE_UNAVAILABLE', true]], JSON.stringify(body.incomplete_reasons))
        assert.match(body.incomplete_reasons[0].message, /database is locked.*retry after \d+ s/)
        assert.equal(body.continuation?.kind, 'retry_after', JSON.stringify(body.continuation))
      }
    } finally {
      await holder.terminate()
      await fx.close()
      await dir.drop()
    }
  })
})
