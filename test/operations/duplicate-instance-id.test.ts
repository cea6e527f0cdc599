import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { createTempDir, createTestPostgresDatabase } from '../support/stores.js'
import { caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { issueUsersTokens, startServe, stopServe } from './support/serve-process.js'
import { startUsersUpstream, usersResourceConfig } from './support/users-upstream.js'

const TARGETS = 60

/**
 * Two `warrant serve` processes started with the same `WARRANT_INSTANCE_ID` (replicas given one environment file):
 * the second must not take the first's operation while the first still runs it. The upstream holds the first's
 * writes while the second starts (its start claims what it may), then lets them through; it counts PATCHes per record.
 */
for (const kind of ['postgres', 'sqlite'] as const) {
  describe(`two serve processes with one WARRANT_INSTANCE_ID (${kind} store)`, () => {
    test('the second does not take over the first one\'s running operation: no target is declared unknown, none is written twice', { timeout: 120_000 }, async () => {
      const upstream = await startUsersUpstream(TARGETS)
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      upstream.onWrite = (_id, n) => (n > 4 ? { hold: held } : { delayMs: 5 })
      const dir = await createTempDir('warrant-dup-id-')
      const pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      const storeUrl = pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`
      const configPath = join(dir.path, 'warrant.json')
      const users = usersResourceConfig(upstream.origin) as { connector: { timeout_ms: number } }
      users.connector.timeout_ms = 60_000 // the held writes wait for the second process to start, however slow
      writeFileSync(configPath, JSON.stringify({ store: storeUrl, server: { host: '127.0.0.1', port: 0 }, execution: { concurrency: 2, batch_size: 20 }, resources: { users } }))
      const env = { WARRANT_INSTANCE_ID: 'web-1' }
      const children: ChildProcess[] = []
      const store = await createStore({ url: storeUrl })
      try {
        const { agentToken, reviewerToken } = await issueUsersTokens(configPath)
        const first = await startServe(configPath, { env })
        children.push(first.child)
        const agent = caller(first.base, agentToken)
        const action = { type: 'set_role', role: 'viewer' }
        const { selection } = await selectProposeApprove(agent, [caller(first.base, reviewerToken)], 'users', { filter: { status: 'active' } }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'dup-id' })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operationId: string = commit.body.operation_id
        // the first holds two writes at the upstream, in flight in the ledger
        while (upstream.totalWrites() < 6) await new Promise((r) => setTimeout(r, 10))
        const before = await store.db.selectFrom('operations').select(['lease_owner']).where('id', '=', operationId).executeTakeFirstOrThrow()

        // the second starts (its gateway claims what it may before it listens) while the first still runs
        const second = await startServe(configPath, { env })
        children.push(second.child)
        const during = await store.db.selectFrom('operations').select(['lease_owner']).where('id', '=', operationId).executeTakeFirstOrThrow()
        const unknownAtStart = await store.db.selectFrom('operation_targets').select('record_id').where('operation_id', '=', operationId).where('state', '=', 'unknown').execute()
        release()

        const operation = await waitForOperation(agent, operationId, 60_000)
        const twice = [...upstream.writes].filter(([, n]) => n > 1)
        assert.deepEqual(twice, [], 'no record written twice')
        assert.deepEqual(unknownAtStart.map((t) => t.record_id), [], 'the second process declared the first one\'s writes in flight interrupted')
        assert.equal(during.lease_owner, before.lease_owner, 'the lease stayed with the first process')
        assert.deepEqual([operation.state, operation.counts.succeeded, operation.counts.unknown], ['succeeded', TARGETS, 0])
        assert.match(second.stderr(), /another process holds live operation leases under WARRANT_INSTANCE_ID \\"web-1\\"/, 'the second said so')
      } finally {
        release()
        for (const child of children) await stopServe(child, 'SIGTERM')
        await store.close()
        await upstream.close()
        await pg?.drop()
        await dir.drop()
      }
    })
  })
}
