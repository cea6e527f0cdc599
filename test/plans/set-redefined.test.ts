import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { approvedClosingPlan, closedByOperation, startThingsToMove } from './support/odd-upstream.js'

/**
 * A reviewer approved writing one thing; a config that now makes the action write another (its `set` templates alone
 * changed: set_status writes "archived" whatever its params say, its write and fields as they were) must refuse the
 * plan, naming the drift. An ordinary plan's definition digest covered `set`; a compensation's did not: it is
 * synthesized from the action it writes through, and its digest bound that action's write and statuses but not its
 * `set`, whose templates map the restored values into the write. So a compensation committed after set_status was
 * redefined ran, and one proposed after the operation ran under another `set` was taken, since only the fields' names
 * were compared (watched fail before the fix, stop 44).
 */
const archiving = (t: Record<string, any>) => {
  t.actions.set_status.set = { status: 'archived' }
}

const redefined = (e: any) => {
  assert.equal(e.code, 'conflict', e.message)
  assert.match(e.message, /set_status/)
  assert.match(e.message, /redefined/)
  return true
}

for (const kind of STORE_KINDS) {
  describe(`an action whose set alone was redefined (${kind} store, odd http upstream)`, () => {
    test('a plan approved before is refused at commit, naming the drift', async () => {
      const things = await startThingsToMove(kind, { move: archiving })
      const { fx, agent, staging } = things
      try {
        const { plan } = await approvedClosingPlan(fx, agent)
        const moved = await things.move()
        await assert.rejects(moved.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest }), (e: any) => {
          assert.deepEqual(e.details?.config_drift, ['action_redefined'], JSON.stringify(e.details))
          return redefined(e)
        })
        assert.equal(staging.writes.size, 0, 'nothing was written')
        await moved.audit.flush()
      } finally {
        await things.close()
      }
    })

    test('a compensation approved before is refused at commit, naming the action it writes through', async () => {
      const things = await startThingsToMove(kind, { move: archiving })
      const { fx, agent, staging } = things
      try {
        const { receipt } = await closedByOperation(fx, agent, staging)
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        const undo = (await fx.gateway.operations.proposeCompensation(agent, receipt.operation_id)) as { plan_id: string; plan_digest: string }
        await fx.gateway.plans.decide(alice, undo.plan_id, { decision: 'approve', expected_plan_digest: undo.plan_digest })
        const writes = [...staging.writes.values()].reduce((a, b) => a + b, 0)
        const moved = await things.move()
        await assert.rejects(moved.operations.commitPlan(agent, undo.plan_id, { idempotencyKey: randomUUID(), expectedDigest: undo.plan_digest }), (e: any) => {
          assert.deepEqual(e.details?.config_drift, ['action_redefined'], JSON.stringify(e.details))
          return redefined(e)
        })
        const view = (await moved.plans.view(agent, undo.plan_id)) as { config_drift?: { code: string }[] }
        assert.deepEqual(view.config_drift?.map((d) => d.code), ['action_redefined'], JSON.stringify(view.config_drift))
        assert.equal([...staging.writes.values()].reduce((a, b) => a + b, 0), writes, 'nothing was written')
        await moved.audit.flush()
      } finally {
        await things.close()
      }
    })

    test('a compensation proposed after the operation ran under another set is refused; nothing is frozen', async () => {
      const things = await startThingsToMove(kind, { move: archiving })
      const { fx, agent, staging } = things
      try {
        const { receipt } = await closedByOperation(fx, agent, staging)
        const moved = await things.move()
        const before = (await moved.store.db.selectFrom('selections').select('id').execute()).length
        await assert.rejects(moved.operations.proposeCompensation(agent, receipt.operation_id), (e: any) => {
          assert.equal(e.details?.reason, 'action_redefined', JSON.stringify(e.details))
          return redefined(e)
        })
        assert.equal((await moved.store.db.selectFrom('selections').select('id').execute()).length, before, 'no selection was frozen')
        await moved.audit.flush()
      } finally {
        await things.close()
      }
    })
  })
}
