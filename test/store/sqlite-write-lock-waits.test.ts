import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'

const HOLD_MS = 400

/**
 * Another process writes to the SQLite store (a CLI command beside `warrant serve`, a second serve) and holds the
 * write lock for a moment, well inside store.busy_timeout_ms, while each step that writes in a transaction runs.
 * SQLite waits for the lock only where a transaction's first statement writes (or it began IMMEDIATE): one that read
 * first and then came to write is refused at once (SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT), a 503 "store busy" for a lock
 * held a few hundred milliseconds. Every step below must wait its turn and succeed. The lock is held by a worker
 * thread, its own connection, which lets go on its own timer (better-sqlite3 waits synchronously on the gateway's),
 * set from the moment the step starts.
 */
function briefLocker(file: string) {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
     const db = new (require('better-sqlite3'))(workerData)
     parentPort.on('message', (m) => {
       if (m === 'close') { db.close(); parentPort.close(); return }
       if (m === 'lock') { db.exec('BEGIN IMMEDIATE'); parentPort.postMessage('held'); return }
       setTimeout(() => db.exec('COMMIT'), Math.max(0, m.releaseAt - Date.now()))
     })`,
    { eval: true, workerData: file },
  )
  return {
    /** Runs `step` while the lock is held, and how long it took. */
    async during<T>(step: () => Promise<T>): Promise<{ value: T; ms: number }> {
      const held = new Promise<void>((resolve) => worker.once('message', () => resolve()))
      worker.postMessage('lock')
      await held
      // the release is timed from here, not from when the lock was taken: under load the 'held' message may arrive
      // after a timer started in the worker had already let go, and the step would never meet the lock
      const started = Date.now()
      worker.postMessage({ releaseAt: started + HOLD_MS })
      const value = await step()
      return { value, ms: Date.now() - started }
    },
    close: () => worker.postMessage('close'),
  }
}

describe('steps that write in a transaction, while another connection briefly holds the SQLite store write lock', () => {
  let fx: GatewayFixture
  let locker: ReturnType<typeof briefLocker>
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 300 })
    locker = briefLocker(fx.storeUrl.slice('sqlite:'.length))
  })
  after(async () => {
    locker?.close()
    await fx?.close()
  })

  /** The step's answer, asserted to have waited for the lock (it overlapped) and then succeeded. */
  const waited = async (what: string, step: () => Promise<{ status: number; body: any }>, expected: number) => {
    const { value, ms } = await locker.during(step)
    assert.equal(value.status, expected, `${what}: ${JSON.stringify(value.body).slice(0, 400)}`)
    assert.ok(ms >= HOLD_MS / 2, `${what} answered in ${ms} ms: it did not meet the lock`)
    return value.body
  }

  test('a selection, its plan, its approval and the commit each wait for the lock and succeed', async () => {
    const agent = fx.as('agent')
    const selection = await waited('selection', () => agent('POST', '/v1/resources/subscriptions/selections', { filter: {}, page_size: 50 }), 201)
    const plan = await waited('plan', () => agent('POST', `/v1/selections/${selection.selection_id}/plans`, { action: { type: 'pause_collection', reason: 'brief lock' } }), 201)
    for (const who of (['reviewer', 'reviewer2'] as const).slice(0, Math.max(1, plan.approval.reviewers_needed)))
      await waited('approval', () => fx.as(who)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'ok' }), 201)
    const commit = await waited('commit', () => agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'brief-lock' }), 202)
    assert.equal(commit.target_count, selection.count)
  })

  test('a build abandoned by another process is reaped (marked failed, its members removed) waiting for the lock', async () => {
    await insertForeignBuildingSelection(fx.gateway.store, 'sel_abandoned', { createdBy: null, origin: null, builder: 'gone-host:1:1', leaseUntil: new Date(Date.now() - 60_000).toISOString() })
    const { value: reaped, ms } = await locker.during(() => fx.gateway.selections.reapAbandoned())
    assert.deepEqual(reaped, ['sel_abandoned'])
    assert.ok(ms >= HOLD_MS / 2, `the reap answered in ${ms} ms: it did not meet the lock`)
  })
})
