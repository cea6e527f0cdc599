import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { approvedClosingPlan, startThingsToMove } from '../plans/support/odd-upstream.js'

/**
 * An operation is recorded by one process and run by whichever executor claims it: the gateway that committed, or,
 * after a restart, the next gateway on the store (a CLI commit without --wait, a gateway stopped mid-run). The
 * commit checked where the plan's resource writes; the run did not. Restarted with the connector's base_url pointed
 * at production (the environment label left as it was), the gateway resumed the operation at open and wrote every
 * pending target to production, a copy with the same ids and versions: an approval given for staging, spent there.
 * A run now starts by comparing where the resource writes with where its plan was proposed: moved, it halts
 * (`upstream_moved`) before any request, its targets left pending; pointed back, nothing was sent elsewhere. Like
 * every halt it is final: its message says so and what the operator does next (select and plan the pending
 * records again once the resource points back, or compensate what was written).
 */
for (const kind of STORE_KINDS) {
  describe(`an operation resumed after its resource's connector was pointed elsewhere (${kind} store)`, () => {
    test('halts before any write, naming the move; its targets stay pending', async () => {
      // a long lease: the first gateway's sweeper does not claim the operation while the test runs
      const things = await startThingsToMove(kind, { edit: (_t, raw) => void (raw.execution = { lease_seconds: 3600 }) })
      const { fx, agent, staging, production } = things
      try {
        const { plan } = await approvedClosingPlan(fx, agent)
        // committed by a process that records and does not run it (a CLI commit without --wait)
        await fx.gateway.audit.flush()
        const recorder = await openGateway({ config: structuredClone(fx.config) as WarrantConfig, executors: false, log: createLogger({ level: 'silent' }) })
        const receipt = await recorder.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `resume-${kind}`, expectedDigest: plan.plan_digest })
        await recorder.audit.flush()
        await recorder.close()

        const moved = await things.move() // resumes unfinished operations as it opens
        const view = await moved.operations.waitFor(receipt.operation_id, 20_000)
        assert.equal(production.writes.size, 0, 'nothing was written where nobody reviewed')
        assert.equal(staging.writes.size, 0)
        assert.equal(view.state, 'halted')
        assert.equal(view.halt_reason?.rule, 'upstream_moved')
        assert.match(view.halt_reason?.message ?? '', /points elsewhere/)
        // a halted operation is final (no halt has a resume path): the message says what the operator does instead
        assert.match(view.halt_reason?.message ?? '', /never resumed, even once the resource points back/)
        assert.match(view.halt_reason?.message ?? '', new RegExp(`warrant remainder ${receipt.operation_id}`), 'the way to finish: propose the rest once it points back')
        assert.match(view.halt_reason?.message ?? '', new RegExp(`warrant compensate ${receipt.operation_id}`))
        assert.equal(view.counts.pending, plan.target_count)
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
