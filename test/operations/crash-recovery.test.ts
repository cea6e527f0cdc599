import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { createTempDir, createTestPostgresDatabase, STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { issueUsersTokens, startServe, stopServe as stop } from './support/serve-process.js'
import { startUsersUpstream, usersResourceConfig } from './support/users-upstream.js'

const TARGETS = 120

for (const kind of STORE_KINDS) {
  describe(`a gateway killed with SIGKILL mid-operation (${kind} store)`, () => {
    test('after a restart no id was written twice, in-flight targets are unknown, the rest succeeded', { timeout: 180_000 }, async () => {
      const upstream = await startUsersUpstream(TARGETS)
      upstream.onWrite = () => ({ delayMs: 30 })
      const dir = await createTempDir('warrant-crash-')
      const pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      const storeUrl = pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`
      const configPath = join(dir.path, 'warrant.json')
      writeFileSync(
        configPath,
        JSON.stringify({
          store: storeUrl,
          server: { host: '127.0.0.1', port: 0 },
          // no settle window: the test waits until the upstream has finished every write it received
          execution: { concurrency: 4, batch_size: 20, lease_seconds: 1, reconcile_settle_seconds: 0 },
          resources: { users: usersResourceConfig(upstream.origin) },
        }),
      )
      const children: ChildProcess[] = []
      try {
        // Tokens first, in the store both processes will use.
        const { agentToken, reviewerToken } = await issueUsersTokens(configPath)

        const first = await startServe(configPath)
        children.push(first.child)
        const agent = caller(first.base, agentToken)
        const { selection } = await selectProposeApprove(agent, [caller(first.base, reviewerToken)], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        assert.equal(selection.count, TARGETS)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `crash-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operationId: string = commit.body.operation_id

        while (upstream.totalWrites() < 40) await new Promise((r) => setTimeout(r, 5))
        await stop(first.child, 'SIGKILL')
        await new Promise((r) => setTimeout(r, 150)) // the upstream finishes the writes it had received

        const store = await createStore({ url: storeUrl })
        const atKill = await store.db.selectFrom('operation_targets').select(['record_id', 'state']).where('operation_id', '=', operationId).execute()
        await store.close()
        const inFlightAtKill = new Set(atKill.filter((t) => t.state === 'in_flight').map((t) => t.record_id))
        assert.ok(inFlightAtKill.size >= 1, 'the kill caught targets in flight')
        assert.ok(atKill.some((t) => t.state === 'pending'), 'the kill came mid-operation')

        const second = await startServe(configPath)
        children.push(second.child)
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
        for (const child of children) await stop(child, 'SIGTERM')
        await upstream.close()
        await pg?.drop()
        await dir.drop()
      }
    })
  })
}
