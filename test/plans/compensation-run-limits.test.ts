import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { closedByOperation, startThingsToMove } from './support/odd-upstream.js'

/**
 * One open compensation per operation: proposing the undo again answers the open one. Once the config's stop rules or
 * pacing differ from those that compensation binds (`run_limits_changed`), it can never be approved or committed, and
 * its view says "propose and review it again"; answering it again left an agent following that advice looping on a plan
 * nobody can run. A compensation bound to other limits is no longer the open one: proposing again makes a plan of the
 * limits configured now.
 */
for (const kind of STORE_KINDS) {
  describe(`a compensation proposed again after the run limits changed (${kind} store)`, () => {
    test('makes a new compensation of the limits configured now; the drifted one stays refused', async () => {
      const things = await startThingsToMove(kind, { moveConfig: (c) => void (c.execution.halt_after_consecutive_errors = 50) })
      const { fx, agent, staging } = things
      try {
        const { receipt } = await closedByOperation(fx, agent, staging)
        const first = (await fx.gateway.operations.proposeCompensation(agent, receipt.operation_id)) as { plan_id: string }
        await fx.gateway.audit.flush()

        const moved = await things.move()
        assert.deepEqual((await moved.plans.view(agent, first.plan_id)).config_drift.map((d) => d.code), ['run_limits_changed'])
        const again = (await moved.operations.proposeCompensation(agent, receipt.operation_id)) as { plan_id: string; created: boolean; config_drift: unknown[]; run_limits: { halt_after_consecutive_errors: number } }
        assert.notEqual(again.plan_id, first.plan_id, 'not the drifted compensation')
        assert.equal(again.created, true)
        assert.deepEqual(again.config_drift, [])
        assert.equal(again.run_limits.halt_after_consecutive_errors, 50)
        const twice = (await moved.operations.proposeCompensation(agent, receipt.operation_id)) as { plan_id: string }
        assert.equal(twice.plan_id, again.plan_id, 'the open compensation of these limits is answered')
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
