import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { closedByOperation, startThingsToMove } from '../plans/support/odd-upstream.js'

/**
 * A compensation's run that finds its resource pointed elsewhere halts (`upstream_moved`) like any run, and its
 * message says how to finish. It said "warrant remainder OP (a new plan of the same action …)": the rest of a
 * compensation restores the recorded before-values, it is not the compensated action again. The message now says so.
 */
for (const kind of STORE_KINDS) {
  describe(`a compensation resumed after its resource was pointed elsewhere (${kind} store)`, () => {
    test('halts, and says the rest restores the before-values, not "the same action"', async () => {
      const things = await startThingsToMove(kind, { edit: (_t, raw) => void (raw.execution = { lease_seconds: 3600 }) })
      const { fx, agent, staging, production } = things
      try {
        const { receipt: original } = await closedByOperation(fx, agent, staging)
        const compensation = (await fx.gateway.operations.proposeCompensation(agent, original.operation_id)) as { plan_id: string; plan_digest: string }
        const alice = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
        await fx.gateway.plans.decide(alice, compensation.plan_id, { decision: 'approve', expected_plan_digest: compensation.plan_digest })
        // committed by a process that records and does not run it (a CLI commit without --wait)
        await fx.gateway.audit.flush()
        const recorder = await openGateway({ config: structuredClone(fx.config) as WarrantConfig, executors: false, log: createLogger({ level: 'silent' }) })
        const receipt = await recorder.operations.commitPlan(agent, compensation.plan_id, { idempotencyKey: `comp-moved-${kind}`, expectedDigest: compensation.plan_digest })
        await recorder.audit.flush()
        await recorder.close()

        const writesBefore = staging.writes.size
        const moved = await things.move()
        const view = await moved.operations.waitFor(receipt.operation_id, 20_000)
        assert.equal(production.writes.size, 0, 'nothing was written where nobody reviewed')
        assert.equal(staging.writes.size, writesBefore)
        assert.equal(view.state, 'halted')
        assert.equal(view.halt_reason?.rule, 'upstream_moved')
        const message = view.halt_reason?.message ?? ''
        assert.match(message, new RegExp(`warrant remainder ${receipt.operation_id}`))
        assert.match(message, /restoring the recorded before-values on the targets this compensation did not finish/)
        assert.doesNotMatch(message, /the same action/)
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
