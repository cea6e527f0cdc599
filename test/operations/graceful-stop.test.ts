import assert from 'node:assert/strict'
import { once } from 'node:events'
import { describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, waitForOperation } from './support/flow.js'
import { startServedOperation } from './support/served-operation.js'

const TARGETS = 120

// SIGKILL is crash-recovery.test.ts; this is the stop an operator's deploy sends. Nothing may be left unknown by
// it: the targets in flight get their answers and are recorded, the rest stay pending for the next process.
for (const kind of STORE_KINDS) {
  describe(`warrant serve stopped with SIGTERM mid-operation (${kind} store)`, () => {
    test('exits cleanly with no target in flight or unknown; the next process finishes the rest, each written once', { timeout: 180_000 }, async () => {
      // a long lease: the next process must not need the old one to expire (a stopped process releases it)
      const served = await startServedOperation({ kind, targets: TARGETS, leaseSeconds: 60, writesBefore: 40 })
      const { upstream, storeUrl, operationId, agentToken, first } = served
      try {
        const exited = once(first, 'exit')
        first.kill('SIGTERM')
        const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null]
        assert.deepEqual([code, signal], [0, null], 'a stop is a clean exit')

        const store = await createStore({ url: storeUrl })
        const atStop = await store.db.selectFrom('operation_targets').select(['record_id', 'state']).where('operation_id', '=', operationId).execute()
        const lease = await store.db.selectFrom('operations').select(['state', 'lease_owner']).where('id', '=', operationId).executeTakeFirstOrThrow()
        await store.close()
        const states = new Map<string, number>()
        for (const t of atStop) states.set(t.state, (states.get(t.state) ?? 0) + 1)
        assert.equal(states.get('in_flight') ?? 0, 0, 'every target sent before the stop was answered and recorded')
        assert.equal(states.get('unknown') ?? 0, 0, 'a clean stop leaves nothing unknown')
        assert.ok((states.get('pending') ?? 0) > 0, 'the stop came mid-operation')
        assert.equal(states.get('succeeded'), upstream.totalWrites(), 'the ledger holds exactly the writes the upstream received')
        assert.equal(lease.lease_owner, null, 'the stopped process released its lease')

        const second = await served.startAnother()
        const agentAgain = caller(second.base, agentToken)
        // within the old lease's 60 s: only a released lease lets the next process start at once
        const operation = await waitForOperation(agentAgain, operationId, 45_000)
        assert.equal(operation.state, 'succeeded')
        assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: TARGETS, failed: 0, skipped: 0, unknown: 0 })
        assert.equal(upstream.writes.size, TARGETS)
        for (const [id, n] of upstream.writes) assert.equal(n, 1, `${id} was written ${n} times`)
        const succeeded = await allResults(agentAgain, operationId, 'succeeded')
        assert.ok(succeeded.every((r) => upstream.users.get(r.id)!.role === 'viewer'))
      } finally {
        await served.close()
      }
    })
  })
}
