import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { call, serveGateway } from '../support/gateway-fixture.js'
import { pagePart, reviewPageHtml, textOf } from '../support/review-page.js'
import { STORE_KINDS } from '../support/stores.js'
import { startThingsToMove } from './support/odd-upstream.js'

/**
 * How hard a run may push (its concurrency, batch size and write rate) and when it stops (consecutive errors,
 * validation failures, the longest Retry-After it waits out) were read from the global `execution:` config at
 * commit: a reviewer never saw them and the approval did not cover them, so an operator who raised
 * halt_after_consecutive_errors from 4 to 50 between the approval and the commit loosened the run unseen. Now the plan
 * binds them at proposal, its view and review page show them, a config that differs since is drift (409 at approval
 * and commit, nothing written), and the operation runs under exactly the plan's values.
 */
const BOUND = { concurrency: 3, batch_size: 7, max_writes_per_second: 40, halt_after_consecutive_errors: 4, halt_after_validation_failures: 6, max_retry_after_seconds: 120 }
const withBound = (_things: Record<string, any>, config: Record<string, any>) => void (config.execution = { ...config.execution, ...BOUND })
const raised = (config: Record<string, any>) => void (config.execution.halt_after_consecutive_errors = 50)

for (const kind of STORE_KINDS) {
  describe(`a plan binds the run's stop rules and pacing (${kind} store)`, () => {
    test('shown on the API and review page; raised between approval and commit is refused naming the key, nothing written; unchanged, it runs under the plan values', async () => {
      const things = await startThingsToMove(kind, { edit: withBound, moveConfig: raised })
      const { fx, agent, staging } = things
      const served = await serveGateway(fx.gateway)
      try {
        const token = (await fx.gateway.principals.issue({ name: 'things-agent-http', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
        const as = (base: string) => (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(base, method, path, body, { authorization: `Bearer ${token}`, ...headers })
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const bob = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
        const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
        const action = { type: 'set_status', params: { status: 'closed' } }
        const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action })
        const pending = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'archived' } } })
        await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })

        const viewed = await as(served.base)('GET', `/v1/plans/${plan.plan_id}`)
        assert.equal(viewed.status, 200)
        assert.deepEqual(viewed.body.run_limits, BOUND, 'the API shows the limits the plan binds')
        const part = textOf(pagePart(await reviewPageHtml({ ...fx, base: served.base }, `/review/plans/${plan.plan_id}`), 'run-limits'))
        for (const shown of [/3 at once/, /40 writes per second/, /batches of 7/, /4 targets in a row/, /6 validation/, /120 s/]) assert.match(part, shown, part)

        const moved = await things.move()
        const movedServed = await serveGateway(moved)
        try {
          const refused = await as(movedServed.base)('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `raised-${kind}` })
          assert.equal(refused.status, 409, JSON.stringify(refused.body))
          assert.equal(refused.body.error.code, 'conflict')
          assert.deepEqual(refused.body.error.details.config_drift, ['run_limits_changed'])
          assert.match(refused.body.error.message, /execution\.halt_after_consecutive_errors is now 50, not the 4/)
          // the article's form finds the plan of this selection and action, and is refused for its drift as well
          await assert.rejects(
            moved.operations.commitBulkAction(agent, 'things', { idempotencyKey: `raised-bulk-${kind}`, body: { selection_id: selection.selection_id, expected_digest: selection.digest, action } }),
            (e: any) => e.code === 'conflict' && e.details.config_drift.includes('run_limits_changed'),
          )
          await assert.rejects(moved.plans.decide(bob, pending.plan_id, { decision: 'approve', expected_plan_digest: pending.plan_digest }), (e: any) => {
            assert.equal(e.code, 'conflict')
            assert.deepEqual(e.details.config_drift, ['run_limits_changed'])
            return true
          })
          const drifted = await moved.plans.view(agent, plan.plan_id)
          assert.deepEqual(drifted.config_drift.map((d) => d.code), ['run_limits_changed'])
          assert.match(drifted.approval_state.who_can_approve, /^nobody: .*halt_after_consecutive_errors/)
          const operations = await moved.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
          assert.equal(operations.length, 0, 'no operation was recorded')
          assert.equal(staging.writes.size, 0, 'nothing was written')

          // proposing again makes a plan of the limits as configured now, with its own digest
          const again = await moved.plans.propose(agent, selection.selection_id, { action })
          assert.equal(again.created, true)
          assert.notEqual(again.plan_digest, plan.plan_digest, 'the digest covers the limits reviewed')
          assert.equal((again as any).run_limits.halt_after_consecutive_errors, 50)
          assert.deepEqual(again.config_drift, [])
          assert.equal((await moved.plans.propose(agent, selection.selection_id, { action })).plan_id, again.plan_id, 'proposing is still idempotent')
        } finally {
          await movedServed.stop()
        }
        await things.handBack()

        // on the config it was approved under, it commits on an approval given since the drift was seen (drift-reverted.test.ts),
        // and the operation runs under exactly its values
        await assert.rejects(fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => e.code === 'not_approved' && /config_drifted_since/.test(e.message))
        await fx.gateway.plans.decide(bob, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        const receipt = await fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `bound-${kind}`, expectedDigest: plan.plan_digest })
        const op = await fx.gateway.operations.waitFor(receipt.operation_id, 60_000)
        assert.equal(op.state, 'succeeded')
        const { concurrency, batch_size, max_writes_per_second, halt_after_consecutive_errors, halt_after_validation_failures, max_retry_after_seconds } = op.stop_rules!
        assert.deepEqual({ concurrency, batch_size, max_writes_per_second, halt_after_consecutive_errors, halt_after_validation_failures, max_retry_after_seconds }, BOUND)
      } finally {
        await served.stop()
        await things.close()
      }
    })

    test('a plan proposed before the limits were bound is judged as before: no drift, it runs under the config at commit', async () => {
      const things = await startThingsToMove(kind, { edit: withBound, moveConfig: raised })
      const { fx, agent } = things
      try {
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
        const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
        await fx.gateway.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        // as an older Warrant stored it: a policy without the limits
        const row = await fx.gateway.store.db.selectFrom('plans').select('policy').where('id', '=', plan.plan_id).executeTakeFirstOrThrow()
        const { run_limits: _bound, ...legacy } = JSON.parse(row.policy) as Record<string, unknown>
        await fx.gateway.store.db.updateTable('plans').set({ policy: JSON.stringify(legacy) }).where('id', '=', plan.plan_id).execute()

        const moved = await things.move()
        const view = await moved.plans.view(agent, plan.plan_id)
        assert.deepEqual(view.config_drift, [])
        assert.equal((view as any).run_limits, null, 'the view says it binds none')
        const movedServed = await serveGateway(moved)
        try {
          const part = textOf(pagePart(await reviewPageHtml({ ...fx, base: movedServed.base }, `/review/plans/${plan.plan_id}`), 'run-limits'))
          assert.match(part, /Not bound to this plan/)
        } finally {
          await movedServed.stop()
        }
        assert.equal((await moved.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })).plan_id, plan.plan_id, 'proposing again answers it, as before')
        const receipt = await moved.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `legacy-${kind}`, expectedDigest: plan.plan_digest })
        const op = await moved.operations.waitFor(receipt.operation_id, 60_000)
        assert.equal(op.stop_rules!.halt_after_consecutive_errors, 50, "the execution config at commit, as before")
        assert.equal(op.stop_rules!.concurrency, BOUND.concurrency)
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
