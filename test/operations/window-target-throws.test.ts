import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { AGENT, createHarness, userId } from './support/harness.js'

/**
 * A window written through `writeWindow` where one target's own write threw after the others were sent: the
 * connector answers that target with its error (`threw`) and the others with their own answers. The executor
 * records each target by its own answer: the thrown target alone `failed` `write_refused` (refused before it was
 * sent), the window's written targets `succeeded` (was: the connector's throw was every target's, and targets
 * written and committed were recorded `failed`, "nothing was sent", never to be compensated).
 */
for (const kind of STORE_KINDS) {
  describe(`a window target whose own write throws (${kind} store)`, () => {
    test('only that target is failed; the others keep what their writes did', async () => {
      const h = await createHarness(kind, { count: 6, windowed: true })
      try {
        const refused = userId(3)
        h.upstream.behaviour = (id) => (id === refused ? 'throws_refused' : 'success')
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: `window-throws-${kind}` })
        const view = await h.operations.waitFor(receipt.operation_id, 10_000)
        assert.ok(h.upstream.windows.some((w) => w.length > 1 && w.includes(refused)), `written as a window: ${JSON.stringify(h.upstream.windows)}`)
        assert.deepEqual(view.counts, { pending: 0, in_flight: 0, succeeded: 5, failed: 1, skipped: 0, unknown: 0 })
        const failed = (await h.operations.results(AGENT, receipt.operation_id, { outcome: 'failed' })).results
        assert.deepEqual(failed.map((r) => [r.id, r.reason]), [[refused, 'write_refused']])
        for (let i = 0; i < 6; i++) assert.equal(h.upstream.rows.get(userId(i))!.fields.role, i === 3 ? 'member' : 'viewer')
      } finally {
        await h.close()
      }
    })
  })
}
