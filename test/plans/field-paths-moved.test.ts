import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { startThingsToMove } from './support/odd-upstream.js'

/**
 * Over http a declared field is read, and by a replacing write written, at its `field_paths` entry inside the record.
 * A reviewer approved "status: open → closed" on things read with `status` at the member `status`; the config was
 * then changed to read `status` at `note` (a typo, or a mapping "fixed" on the wrong field), the base_url, the
 * environment and the action left as they were. The approval held: the replacing write put "closed" into each
 * thing's `note`, the re-read found `status` (now `note`) closed, and every target was `succeeded`. Where each
 * field lives is part of the upstream digest a selection keeps at its freeze and a plan at its proposal, as the id's
 * path already was: the commit and the approval are 409 `conflict` and nothing is written.
 */
for (const kind of STORE_KINDS) {
  describe(`a plan whose resource reads a set field at another path since its proposal (${kind} store)`, () => {
    test('is refused at commit and approval, and its view says why; nothing is written', async () => {
      const things = await startThingsToMove(kind, {
        edit: (t) => {
          t.actions.set_status.write = { style: 'replace', method: 'PUT', path: '/things/{id}', version: { in: 'header', name: 'If-Match' } }
          t.actions.set_status.precondition = {}
        },
        move: (t) => void (t.connector.field_paths = { status: 'note' }),
      })
      const { fx, agent, staging } = things
      try {
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const bob = await fx.gateway.principals.authenticate(fx.tokens.reviewer2, 'http')
        const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
        assert.equal(selection.complete, true)
        const approved = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
        await fx.gateway.plans.decide(alice, approved.plan_id, { decision: 'approve', expected_plan_digest: approved.plan_digest })
        const pending = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'archived' } } })

        const moved = await things.move()
        await assert.rejects(moved.operations.commitPlan(agent, approved.plan_id, { idempotencyKey: `paths-${kind}`, expectedDigest: approved.plan_digest }), (e: any) => {
          assert.equal(e.code, 'conflict')
          assert.match(e.message, /field_paths|where .* fields? (are|is) read/)
          return true
        })
        await assert.rejects(moved.plans.decide(bob, pending.plan_id, { decision: 'approve', expected_plan_digest: pending.plan_digest }), (e: any) => e.code === 'conflict')
        const view = await moved.plans.view(agent, approved.plan_id)
        assert.deepEqual(view.config_drift.map((d) => d.code), ['upstream_moved'])
        await new Promise((r) => setTimeout(r, 200))
        assert.equal(staging.writes.size, 0, 'no thing was written')
        assert.ok([...staging.things.values()].every((t) => t.note === 'n' && t.status === 'open'))
        await things.handBack()
        // as configured at proposal again, the plan commits on an approval given since the drift was seen (drift-reverted.test.ts)
        await assert.rejects(fx.gateway.plans.assertCommittable(agent, approved.plan_id, approved.plan_digest), (e: any) => e.code === 'not_approved' && /config_drifted_since/.test(e.message))
        await fx.gateway.plans.decide(bob, approved.plan_id, { decision: 'approve', expected_plan_digest: approved.plan_digest })
        await fx.gateway.plans.assertCommittable(agent, approved.plan_id, approved.plan_digest)
      } finally {
        await things.close()
      }
    })
  })
}
