import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A plan binds its sql resource's `connector.write_window` with its run limits (write-window-bound.test.ts), and its
 * operation stores them as its stop rules. An operation is run by whichever executor claims it: after a restart, the
 * next gateway on the store, which may have been started on a config whose write_window was raised since the commit.
 * The run it resumes must write windows of the size the plan bound, not the connector's new one.
 */
const BOUND_WINDOW = 5
const action = { type: 'pause_collection', params: { reason: 'window on resume' } }

for (const kind of STORE_KINDS) {
  describe(`an operation resumed by a process whose write_window was raised since the commit (${kind} store, SQLite upstream)`, () => {
    test('writes windows of the size its plan bound', async () => {
      const fx = await startDemoGateway({
        store: kind,
        upstream: 'sqlite',
        count: 300,
        serve: false,
        edit: (raw) => {
          // a long lease: the first gateway's sweeper does not claim the operation while the test runs
          raw.execution = { ...(raw.execution ?? {}), concurrency: 2, lease_seconds: 3600 }
          raw.resources.subscriptions.connector.write_window = BOUND_WINDOW
        },
      })
      let resumed: Gateway | undefined
      try {
        const agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', collection: 'active' } })
        assert.ok(selection.count > 3 * BOUND_WINDOW, `selection of ${selection.count}`)
        const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action })
        await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })

        // committed by a process that records and does not run it (a CLI commit without --wait)
        await fx.gateway.audit.flush()
        const recorder = await openGateway({ config: structuredClone(fx.config) as WarrantConfig, executors: false, log: createLogger({ level: 'silent' }) })
        const receipt = await recorder.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `resume-window-${kind}`, expectedDigest: plan.plan_digest })
        await recorder.audit.flush()
        await recorder.close()

        // the next gateway, its resource's write_window raised from 5 to 50: it resumes the operation as it opens
        const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
        config.resources.subscriptions.connector.write_window = 50
        resumed = await openGateway({ config, log: createLogger({ level: 'silent' }) })
        const op = await resumed.operations.waitFor(receipt.operation_id, 60_000)
        assert.equal(op.state, 'succeeded', JSON.stringify(op.halt_reason))
        assert.equal(op.counts.succeeded, selection.count)
        assert.equal((op.stop_rules as any).write_window, BOUND_WINDOW)
        await resumed.audit.flush()
        const page = await resumed.audit.query({ operation_id: receipt.operation_id, level: 'call', limit: 1000 })
        const windows = page.events.filter((e) => (e.summary as any).method === 'UPDATE').map((e) => (e.summary as any).window as number | undefined)
        assert.equal(windows.length, selection.count, JSON.stringify(page.events.slice(0, 2)))
        assert.equal(Math.max(...windows.filter((w): w is number => typeof w === 'number')), BOUND_WINDOW, 'statements carried the bound window, not the raised one')
      } finally {
        await resumed?.close()
        await fx.close()
      }
    })
  })
}
