import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { renderPlan } from '../../src/cli/render-selection.js'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { call, serveGateway, startDemoGateway } from '../support/gateway-fixture.js'
import { pagePart, reviewPageHtml, textOf } from '../support/review-page.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A sql resource's `write_window` is how many targets one conditional UPDATE writes, so how many are in flight at
 * once: the run's pacing as much as `execution.concurrency`. It was read from the connector config at run time,
 * outside the plan: an operator raising it from 5 to 50 between the approval and the commit widened the run unseen.
 * Now the plan binds it with its run limits, shows it, its digest covers it, a config that differs since is drift
 * naming the key (409 at approval and commit, nothing written), and the operation writes windows of the bound size.
 */
const BOUND_WINDOW = 5
const action = { type: 'pause_collection', params: { reason: 'window bound' } }

/** Versions above 1 on the demo upstream: rows some write reached. */
function writtenRows(upstreamUrl: string): number {
  const db = new BetterSqlite3(upstreamUrl.slice('sqlite:'.length), { readonly: true })
  try {
    return (db.prepare('select count(*) as n from subscriptions where version > 1').get() as { n: number }).n
  } finally {
    db.close()
  }
}

for (const kind of STORE_KINDS) {
  describe(`a plan binds its sql resource's write_window (${kind} store, SQLite upstream)`, () => {
    test('shown; raised between approval and commit is refused naming the key, nothing written; unchanged, it runs in windows of the bound size', async () => {
      const fx = await startDemoGateway({
        store: kind,
        upstream: 'sqlite',
        count: 300,
        serve: true,
        edit: (raw) => {
          raw.execution = { ...(raw.execution ?? {}), concurrency: 2 }
          raw.resources.subscriptions.connector.write_window = BOUND_WINDOW
        },
      })
      let moved: Gateway | undefined
      try {
        const agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const bob = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
        const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', collection: 'active' } })
        assert.ok(selection.count > 3 * BOUND_WINDOW, `selection of ${selection.count}`)
        const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action })
        const pending = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'pause_collection', params: { reason: 'another' } } })
        await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })

        const viewed = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
        assert.equal(viewed.status, 200)
        assert.equal(viewed.body.run_limits.write_window, BOUND_WINDOW, JSON.stringify(viewed.body.run_limits))
        const part = textOf(pagePart(await reviewPageHtml(fx, `/review/plans/${plan.plan_id}`), 'run-limits'))
        assert.match(part, /5 targets per statement/, part)
        assert.match(renderPlan(viewed.body), /run limits: .*5 targets per statement/)

        // another process on the same store, the resource's write_window raised from 5 to 50
        await fx.gateway.audit.flush()
        const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
        config.resources.subscriptions.connector.write_window = 50
        moved = await openGateway({ config, log: createLogger({ level: 'silent' }) })
        const served = await serveGateway(moved)
        try {
          const refused = await call(served.base, 'POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { authorization: `Bearer ${fx.tokens.agent}`, 'idempotency-key': `window-raised-${kind}` })
          assert.equal(refused.status, 409, JSON.stringify(refused.body))
          assert.deepEqual(refused.body.error.details.config_drift, ['run_limits_changed'])
          assert.match(refused.body.error.message, /resources\.subscriptions\.connector\.write_window is now 50, not the 5 /)
          await assert.rejects(
            moved.operations.commitBulkAction(agent, 'subscriptions', { idempotencyKey: `window-raised-bulk-${kind}`, body: { selection_id: selection.selection_id, expected_digest: selection.digest, action } }),
            (e: any) => e.code === 'conflict' && e.details.config_drift.includes('run_limits_changed'),
          )
          await assert.rejects(moved.plans.decide(bob, pending.plan_id, { decision: 'approve', expected_plan_digest: pending.plan_digest }), (e: any) => {
            assert.equal(e.code, 'conflict')
            assert.deepEqual(e.details.config_drift, ['run_limits_changed'])
            return true
          })
          const operations = await moved.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
          assert.equal(operations.length, 0, 'no operation was recorded')
          assert.equal(writtenRows(fx.upstreamUrl), 0, 'nothing was written')

          // a plan that bound run limits without the key (proposed before plans bound it) is judged as before
          const row = await moved.store.db.selectFrom('plans').select('policy').where('id', '=', pending.plan_id).executeTakeFirstOrThrow()
          const policy = JSON.parse(row.policy) as { run_limits: Record<string, unknown> }
          const { write_window: _bound, ...earlier } = policy.run_limits
          await moved.store.db.updateTable('plans').set({ policy: JSON.stringify({ ...policy, run_limits: earlier }) }).where('id', '=', pending.plan_id).execute()
          assert.deepEqual((await moved.plans.view(agent, pending.plan_id)).config_drift, [], 'absent key: no drift')

          // proposing again binds the window configured now, under another digest
          const again = await moved.plans.propose(agent, selection.selection_id, { action })
          assert.equal(again.created, true)
          assert.notEqual(again.plan_digest, plan.plan_digest)
          assert.equal((again as any).run_limits.write_window, 50)
        } finally {
          await served.stop()
          await moved.audit.flush()
        }

        // on the config it was approved under, it commits on an approval given since the drift was seen (drift-reverted.test.ts),
        // and writes windows of the bound size
        await assert.rejects(fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => e.code === 'not_approved' && /config_drifted_since/.test(e.message))
        await fx.gateway.plans.decide(bob, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        const receipt = await fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `window-bound-${kind}`, expectedDigest: plan.plan_digest })
        const op = await fx.gateway.operations.waitFor(receipt.operation_id, 60_000)
        assert.equal(op.state, 'succeeded', JSON.stringify(op.halt_reason))
        assert.equal(op.counts.succeeded, selection.count)
        assert.equal((op.stop_rules as any).write_window, BOUND_WINDOW)
        await fx.gateway.audit.flush()
        const page = await fx.gateway.audit.query({ operation_id: receipt.operation_id, level: 'call', limit: 1000 })
        const windows = page.events.filter((e) => (e.summary as any).method === 'UPDATE').map((e) => (e.summary as any).window as number)
        assert.equal(windows.length, selection.count, JSON.stringify(page.events.slice(0, 2)))
        // a last lone target goes as a statement of its own (no window named)
        assert.equal(Math.max(...windows.filter((w) => typeof w === 'number')), BOUND_WINDOW, 'statements carried the bound window, not the concurrency')
        assert.equal(writtenRows(fx.upstreamUrl), selection.count)
      } finally {
        await moved?.close()
        await fx.close()
      }
    })
  })
}
