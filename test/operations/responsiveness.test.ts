import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { caller, selectProposeApprove, waitForOperation } from './support/flow.js'

/** Generous: a blocked loop was seconds (the whole freeze or operation); a served one is a few ms per turn. */
const MAX_LOOP_GAP_MS = 500
const RECORDS = 30_000

/**
 * The whole gateway on SQLite (store and upstream): every statement is synchronous, so without slices the event
 * loop would not turn from the start of a freeze or an operation to its end.
 */
describe('a SQLite-backed gateway stays responsive (event loop, /health, lease renewal)', () => {
  test('/health answers and timers fire while a large selection freezes and an operation runs', { timeout: 300_000 }, async () => {
    const fx = await startDemoGateway({ store: 'sqlite', count: RECORDS, edit: (raw) => (raw.execution = { concurrency: 8, batch_size: 200, lease_seconds: 1 }) })
    const gaps = monitorEventLoopDelay({ resolution: 10 })
    let healthChecks = 0
    let healthFailures = 0
    let polling = true
    const poller = (async () => {
      while (polling) {
        const res = await fetch(`${fx.base}/health`).catch(() => null)
        if (res?.status === 200) healthChecks++
        else healthFailures++
        await res?.text()
        await new Promise((r) => setTimeout(r, 20))
      }
    })()
    try {
      const agent = caller(fx.base, fx.tokens.agent)
      const reviewers = [caller(fx.base, fx.tokens.reviewer), caller(fx.base, fx.tokens.reviewer2)]
      gaps.enable()
      // the whole table, frozen; then an operation on the past-due part of it
      const all = await agent('POST', '/v1/resources/subscriptions/selections', { filter: {} })
      assert.equal(all.status, 201, JSON.stringify(all.body))
      assert.equal(all.body.count, RECORDS)
      const freezeGapMs = gaps.max / 1e6
      const action = { type: 'pause_collection', reason: 'responsiveness test' }
      const { selection, plan } = await selectProposeApprove(agent, reviewers, 'subscriptions', { filter: { status: 'past_due', collection: 'active', id: { lt: 'sub_08000' } } }, action)
      assert.ok(selection.count > 500, `${selection.count} targets`)
      const body = { selection_id: selection.selection_id, expected_digest: selection.digest, action }
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', body, { 'idempotency-key': 'responsive-1' })
      assert.equal(commit.body.plan_id, plan.plan_id)
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const done = await waitForOperation(agent, commit.body.operation_id, 240_000)
      gaps.disable()
      assert.equal(done.state, 'succeeded', JSON.stringify(done))
      assert.equal(done.counts.succeeded, selection.count)
      // the lease (1 s) was renewed all along: the first claim ran the operation to its end, nothing was interrupted
      const trail = await fx.gateway.store.db.selectFrom('audit_events').select('action').where('operation_id', '=', commit.body.operation_id).where('action', 'like', 'operation.%').execute()
      assert.ok(!trail.some((e) => e.action === 'operation.recovered'), JSON.stringify(trail))
      const attempts = await fx.gateway.store.db.selectFrom('operation_targets').select('attempts').where('operation_id', '=', commit.body.operation_id).where('attempts', '!=', 1).execute()
      assert.equal(attempts.length, 0)
      assert.equal(healthFailures, 0)
      assert.ok(healthChecks > 10, `${healthChecks} /health answers`)
      assert.ok(freezeGapMs < MAX_LOOP_GAP_MS, `the event loop stalled ${freezeGapMs.toFixed(0)} ms while freezing ${RECORDS} records`)
      assert.ok(gaps.max / 1e6 < MAX_LOOP_GAP_MS, `the event loop stalled ${(gaps.max / 1e6).toFixed(0)} ms`)
    } finally {
      polling = false
      await poller
      gaps.disable()
      await fx.close()
    }
  })
})
