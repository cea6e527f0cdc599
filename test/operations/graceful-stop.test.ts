import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { createTempDir, createTestPostgresDatabase, STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { issueUsersTokens, startServe, stopServe } from './support/serve-process.js'
import { startUsersUpstream, usersResourceConfig } from './support/users-upstream.js'

const TARGETS = 120

// SIGKILL is crash-recovery.test.ts; this is the stop an operator's deploy sends. Nothing may be left unknown by
// it: the targets in flight get their answers and are recorded, the rest stay pending for the next process.
for (const kind of STORE_KINDS) {
  describe(`warrant serve stopped with SIGTERM mid-operation (${kind} store)`, () => {
    test('exits cleanly with no target in flight or unknown; the next process finishes the rest, each written once', { timeout: 180_000 }, async () => {
      const upstream = await startUsersUpstream(TARGETS)
      upstream.onWrite = () => ({ delayMs: 30 })
      const dir = await createTempDir('warrant-sigterm-')
      const pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      const storeUrl = pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`
      const configPath = join(dir.path, 'warrant.json')
      writeFileSync(
        configPath,
        JSON.stringify({
          store: storeUrl,
          server: { host: '127.0.0.1', port: 0 },
          // a long lease: the next process must not need the old one to expire (a stopped process releases it)
          execution: { concurrency: 4, batch_size: 20, lease_seconds: 60, reconcile_settle_seconds: 0 },
          resources: { users: usersResourceConfig(upstream.origin) },
        }),
      )
      const children: ChildProcess[] = []
      try {
        const { agentToken, reviewerToken } = await issueUsersTokens(configPath)
        const first = await startServe(configPath)
        children.push(first.child)
        const agent = caller(first.base, agentToken)
        const { selection } = await selectProposeApprove(agent, [caller(first.base, reviewerToken)], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        assert.equal(selection.count, TARGETS)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `sigterm-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operationId: string = commit.body.operation_id

        while (upstream.totalWrites() < 40) await new Promise((r) => setTimeout(r, 5))
        const exited = once(first.child, 'exit')
        first.child.kill('SIGTERM')
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

        const second = await startServe(configPath)
        children.push(second.child)
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
        for (const child of children) await stopServe(child, 'SIGTERM')
        await upstream.close()
        await pg?.drop()
        await dir.drop()
      }
    })
  })
}
