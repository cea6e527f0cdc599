import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, waitForOperation } from './support/flow.js'
import { stopServe as stop } from './support/serve-process.js'
import { startServedOperation } from './support/served-operation.js'

const TARGETS = 120

for (const kind of STORE_KINDS) {
  describe(`a gateway killed with SIGKILL mid-operation (${kind} store)`, () => {
    test('after a restart no id was written twice, in-flight targets are unknown, the rest succeeded', { timeout: 180_000 }, async () => {
      const served = await startServedOperation({ kind, targets: TARGETS, leaseSeconds: 1, writesBefore: 40 })
      const { upstream, storeUrl, operationId, agentToken } = served
      try {
        await stop(served.first, 'SIGKILL')
        await new Promise((r) => setTimeout(r, 150)) // the upstream finishes the writes it had received

        const store = await createStore({ url: storeUrl })
        const atKill = await store.db.selectFrom('operation_targets').select(['record_id', 'state']).where('operation_id', '=', operationId).execute()
        await store.close()
        const inFlightAtKill = new Set(atKill.filter((t) => t.state === 'in_flight').map((t) => t.record_id))
        assert.ok(inFlightAtKill.size >= 1, 'the kill caught targets in flight')
        assert.ok(atKill.some((t) => t.state === 'pending'), 'the kill came mid-operation')

        const second = await served.startAnother()
        const agentAgain = caller(second.base, agentToken)
        const operation = await waitForOperation(agentAgain, operationId, 120_000)

        for (const [id, n] of upstream.writes) assert.equal(n, 1, `${id} was written ${n} times`)
        assert.equal(operation.state, 'completed_with_unknown')
        assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: TARGETS - inFlightAtKill.size, failed: 0, skipped: 0, unknown: inFlightAtKill.size })
        const unknown = await allResults(agentAgain, operationId, 'unknown')
        assert.deepEqual(new Set(unknown.map((r) => r.id)), inFlightAtKill)
        assert.ok(unknown.every((r) => r.reason === 'interrupted: no durable answer'))
        const succeeded = await allResults(agentAgain, operationId, 'succeeded')
        assert.ok(succeeded.every((r) => upstream.writes.get(r.id) === 1 && upstream.users.get(r.id)!.role === 'viewer'))

        // Reconciliation re-reads the unknown ones: those the upstream applied succeeded, the others did not happen.
        const reconciled = await agentAgain('POST', `/v1/operations/${operationId}/reconcile`)
        assert.equal(reconciled.status, 200, JSON.stringify(reconciled.body))
        const applied = [...inFlightAtKill].filter((id) => upstream.users.get(id)!.role === 'viewer').length
        assert.deepEqual([reconciled.body.succeeded, reconciled.body.failed, reconciled.body.still_unknown], [applied, inFlightAtKill.size - applied, 0])
        assert.equal(reconciled.body.operation.counts.succeeded, upstream.writes.size, 'the ledger now says exactly what the upstream holds')
        assert.equal(upstream.totalWrites(), upstream.writes.size, 'reconciliation wrote nothing')
      } finally {
        await served.close()
      }
    })
  })
}
