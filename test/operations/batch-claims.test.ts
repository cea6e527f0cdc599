import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { claimSize } from '../../src/operations/executor.js'
import { STORE_KINDS } from '../support/stores.js'
import { AGENT, createHarness } from './support/harness.js'

describe('claimSize', () => {
  test('a window at a time; once the feed has no more, a remainder of at most half a window rides with the window before it', () => {
    assert.equal(claimSize(50, 16, true), 16)
    assert.equal(claimSize(34, 16, true), 16)
    assert.equal(claimSize(24, 16, true), 24, 'half a window past this one: claimed with it')
    assert.equal(claimSize(25, 16, true), 16, 'more than half a window past it: a window of its own')
    assert.equal(claimSize(18, 16, false), 16, 'the feed may still give more: a window')
    assert.equal(claimSize(3, 16, true), 3)
    assert.equal(claimSize(2, 1, true), 1, 'a window of one never takes another')
  })
})

for (const kind of STORE_KINDS) {
  describe(`batch claims (${kind} store)`, () => {
    // Each claim is a commit the store syncs before any of its writes: a batch of 10 at a concurrency of 4 was
    // claimed 4, 4 and 2 (three syncs), and is now claimed 4 and 6 (two).
    test('a batch re-read for its membership is claimed without a runt window at its end; every write still follows its in_flight', async () => {
      const h = await createHarness(kind, { count: 20, consistentSnapshot: false, execution: { concurrency: 4, batch_size: 10 } })
      try {
        // what the store holds committed as each write arrives: the targets in flight then, by ord
        const seen = new Map<number, number[]>()
        let operationId = ''
        h.upstream.onWrite = async (id) => {
          const rows = await h.store.db.selectFrom('operation_targets').select(['record_id', 'state', 'ord']).where('operation_id', '=', operationId).execute()
          const ord = Number(rows.find((r) => r.record_id === id)!.ord)
          seen.set(ord, rows.filter((r) => r.state === 'in_flight').map((r) => Number(r.ord)).sort((a, b) => a - b))
        }
        h.upstream.writeDelayMs = 20
        const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-batch-claims' })
        operationId = receipt.operation_id
        const view = await h.operations.waitFor(receipt.operation_id, 20_000)
        assert.deepEqual([view.state, view.counts.succeeded], ['succeeded', 20])
        assert.ok([...h.upstream.calls.values()].every((n) => n === 1), 'every target written once')
        for (const [ord, inFlight] of seen) assert.ok(inFlight.includes(ord), `ord ${ord} was written before it was in flight`)
        // each batch: a window of 4, then the batch's other 6 in one claim (not 4 and then 2)
        for (const first of [4, 14]) {
          const inFlight = seen.get(first)!
          for (const ord of [first, first + 1, first + 2, first + 3, first + 4, first + 5]) assert.ok(inFlight.includes(ord), `ord ${ord} claimed with ord ${first} (in flight: ${inFlight.join(', ')})`)
          // the batch before may still show targets in flight whose answers came back: outcomes commit in groups, a
          // few milliseconds late (under load on PostgreSQL, 8 and 9 were still in flight as 14 was written)
          const ofThisBatch = inFlight.filter((o) => o >= first - 4)
          assert.ok(ofThisBatch.length <= 10, `at most two and a half windows of this batch in flight (${inFlight.join(', ')})`)
        }
      } finally {
        await h.close()
      }
    })
  })
}
