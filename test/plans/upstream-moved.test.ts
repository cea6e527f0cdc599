import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { startThingsToMove } from './support/odd-upstream.js'

/**
 * A plan is bound to the environment a reviewer saw, and that environment is a label the config declares
 * (`environment.name`, `host`), not where the connector reads and writes. A platform engineer who points the
 * resource's `base_url` from staging to production and leaves the label as it was restarts the gateway on a store
 * holding a plan approved on staging. Production being a copy of staging (same ids, same ETags), that plan
 * committed and wrote production. Now the plan keeps a digest of where its resource's connector pointed when it
 * was proposed; a commit or approval after the connector moved is 409 `conflict` naming the move, and nothing is
 * written.
 */
for (const kind of STORE_KINDS) {
  describe(`a plan whose resource's connector was pointed elsewhere since its proposal (${kind} store)`, () => {
    test('is refused at commit, approval and in its view, though the environment label is unchanged; nothing is written', async () => {
      const things = await startThingsToMove(kind)
      const { fx, agent, production } = things
      try {
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const bob = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
        const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
        const approved = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
        await fx.gateway.plans.decide(alice, approved.plan_id, { decision: 'approve', expected_plan_digest: approved.plan_digest })
        const pending = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'archived' } } })

        // The same config, the connector pointed at production, the environment label untouched.
        const moved = await things.move()
        assert.equal(moved.catalogue.get('things').environment, fx.gateway.catalogue.get('things').environment, 'the label reads the same')

        await assert.rejects(moved.operations.commitPlan(agent, approved.plan_id, { idempotencyKey: `moved-${kind}`, expectedDigest: approved.plan_digest }), (e: any) => {
          assert.equal(e.code, 'conflict')
          assert.match(e.message, /connector .*(another|elsewhere)|points elsewhere/)
          return true
        })
        await assert.rejects(moved.plans.decide(bob, pending.plan_id, { decision: 'approve', expected_plan_digest: pending.plan_digest }), (e: any) => e.code === 'conflict')
        const view = await moved.plans.view(agent, approved.plan_id)
        assert.deepEqual(view.config_drift.map((d) => d.code), ['upstream_moved'])
        assert.match(view.approval_state.who_can_approve, /^nobody: /)
        assert.equal(production.writes.size, 0, 'nothing was written to the upstream nobody reviewed')
        // as configured at proposal again, the plan commits on an approval given since the drift was seen (drift-reverted.test.ts)
        await things.handBack()
        await assert.rejects(fx.gateway.plans.assertCommittable(agent, approved.plan_id, approved.plan_digest), (e: any) => e.code === 'not_approved' && /config_drifted_since/.test(e.message))
        await fx.gateway.plans.decide(bob, approved.plan_id, { decision: 'approve', expected_plan_digest: approved.plan_digest })
        await fx.gateway.plans.assertCommittable(agent, approved.plan_id, approved.plan_digest)
      } finally {
        await things.close()
      }
    })
  })
}
