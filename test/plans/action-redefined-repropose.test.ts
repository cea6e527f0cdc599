import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { startThingsToMove } from './support/odd-upstream.js'

/**
 * A plan whose action was redefined since its proposal is refused at approval and commit, and its view says
 * "propose and review it again". Proposing is idempotent, and "the same proposal" was the same selection and the same
 * action name and params: proposing again answered that drifted plan (`created: false`), which no reviewer can
 * approve and no agent commit, so an agent following the advice looped, and a commit by selection and action found
 * it too. The same proposal is now also the same definition of the action: proposing again makes a plan of the
 * action as it is defined now, with its own digest (the plan digest covers the definition a reviewer sees), and
 * the drifted plan stays refused.
 */
for (const kind of STORE_KINDS) {
  describe(`proposing again after the action was redefined (${kind} store)`, () => {
    test('makes a new plan of the current definition, with another digest, that can be approved and committed; the old one stays refused', async () => {
      const things = await startThingsToMove(kind, { move: (t) => void (t.actions.set_status.precondition = {}) })
      const { fx, agent } = things
      try {
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const bob = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
        const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
        const action = { type: 'set_status', params: { status: 'closed' } }
        const old = await fx.gateway.plans.propose(agent, selection.selection_id, { action })
        await fx.gateway.plans.decide(alice, old.plan_id, { decision: 'approve', expected_plan_digest: old.plan_digest })

        const moved = await things.move()
        assert.deepEqual((await moved.plans.view(agent, old.plan_id)).config_drift.map((d) => d.code), ['action_redefined'])
        const again = await moved.plans.propose(agent, selection.selection_id, { action })
        assert.equal(again.created, true, 'a new plan, not the drifted one')
        assert.notEqual(again.plan_id, old.plan_id)
        assert.notEqual(again.plan_digest, old.plan_digest, 'the digest covers the definition reviewed')
        assert.deepEqual(again.config_drift, [])
        const twice = await moved.plans.propose(agent, selection.selection_id, { action })
        assert.equal(twice.plan_id, again.plan_id, 'proposing is still idempotent')
        assert.equal(twice.created, false)
        assert.equal((await moved.plans.findBySelectionAndAction(agent, selection.selection_id, action))?.plan_id, again.plan_id)

        await moved.plans.decide(bob, again.plan_id, { decision: 'approve', expected_plan_digest: again.plan_digest })
        await moved.plans.assertCommittable(agent, again.plan_id, again.plan_digest)
        await assert.rejects(moved.plans.assertCommittable(agent, old.plan_id, old.plan_digest), (e: any) => e.code === 'conflict')
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
