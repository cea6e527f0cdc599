import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { AGENT, createHarness } from './support/harness.js'

/**
 * A sql connector judges writes on catalogue facts (UPDATE triggers, the engine, column types) that a migration
 * can change while Warrant serves. The executor asks the connector to read them afresh as each run starts, before
 * its first write, so an operation committed after a migration is judged on the table as it is then.
 */
for (const kind of STORE_KINDS) {
  describe(`the catalogue is read afresh as each run starts (${kind} store)`, () => {
    for (const windowed of [false, true]) {
      test(`before the first write of each operation${windowed ? ', window by window' : ''}`, async () => {
        const h = await createHarness(kind, { count: 5, windowed })
        try {
          const first = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: `refresh-1-${windowed}` })
          assert.equal((await h.operations.waitFor(first.operation_id, 10_000)).state, 'succeeded')
          assert.deepEqual(h.upstream.refreshes, [0], 'one refresh, before any write of the first run')
          const plan = await h.addPlan()
          const writtenBefore = h.upstream.order.length
          const second = await h.operations.commitPlan(AGENT, plan.plan_id, { expectedDigest: plan.plan_digest, idempotencyKey: `refresh-2-${windowed}` })
          const view = await h.operations.waitFor(second.operation_id, 10_000)
          assert.equal(h.upstream.refreshes.length, 2, JSON.stringify(view.counts))
          assert.equal(h.upstream.refreshes[1], writtenBefore, 'the second refresh came before that run wrote')
        } finally {
          await h.close()
        }
      })
    }
  })
}
