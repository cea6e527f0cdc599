import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { startUsersUpstream, userIdOf, usersResourceConfig, type UsersUpstream } from './support/users-upstream.js'

/**
 * A write the upstream answers 409 Conflict. Its precondition and version were checked on the record read just
 * before the write, so a 409 is not by itself "no longer meets the precondition": it was recorded `skipped`,
 * reason `precondition_failed` ("the record no longer meets the action's precondition"), for an upstream
 * refusing every write for a conflict of its own (a lock, a duplicate value), and a skip ends the error streak
 * and counts as no refusal, so no stop rule ever fired: 12 targets, 12 writes refused, `completed_with_skips`.
 * The record is re-read: changed since its read (an optimistic lock's 409: Kubernetes, CouchDB) is a skip for
 * that change; as read, the upstream refused the write itself (`failed`, `rejected`, a refusal the thresholds count).
 * So for a 404 on the write of a record the read endpoint still shows (a write endpoint scoped otherwise): it
 * was a `missing` skip, "no longer exists upstream", of a record that exists.
 */
for (const kind of STORE_KINDS) {
  describe(`a write answered 409 Conflict (${kind} store)`, () => {
    let upstream: UsersUpstream
    let fx: GatewayFixture
    before(async () => {
      upstream = await startUsersUpstream(12)
      fx = await startDemoGateway({
        store: kind,
        count: 10,
        edit: (raw) => {
          raw.resources.users = usersResourceConfig(upstream.origin)
          raw.execution = { ...(raw.execution ?? {}), concurrency: 1, halt_after_validation_failures: 3 }
        },
      })
    })
    after(async () => {
      await fx?.close()
      await upstream?.close()
    })
    const run = async (ids: readonly string[], key: string) => {
      const token = (await fx.gateway.principals.issue({ name: `users-agent-${key}`, role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
      const agent = caller(fx.base, token)
      const action = { type: 'set_role', role: 'viewer' }
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { id: { in: [...ids] } } }, action)
      const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `${key}-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      return { operation: await waitForOperation(agent, commit.body.operation_id), results: await allResults(agent, commit.body.operation_id) }
    }

    test('an upstream refusing every write with 409, the records unchanged: failed (rejected), and the operation halts', async () => {
      const ids = Array.from({ length: 8 }, (_, i) => userIdOf(i + 1))
      upstream.onWrite = () => ({ refuse: { status: 409, body: { error: 'the account is locked by a running export' } } })
      const before = upstream.totalWrites()
      const { operation, results } = await run(ids, 'locked')
      assert.equal(operation.state, 'halted', JSON.stringify(operation))
      assert.equal(operation.halt_reason.rule, 'validation_failures', JSON.stringify(operation.halt_reason))
      assert.equal(upstream.totalWrites() - before, 3, 'the threshold of refusals stops the writes')
      const refused = results.filter((r) => r.outcome !== 'pending')
      assert.deepEqual(refused.map((r) => [r.outcome, r.reason]), refused.map(() => ['failed', 'rejected']), JSON.stringify(refused))
      assert.match(refused[0].error, /locked by a running export/)
      assert.match(refused[0].error, /as read before the write/)
      for (const id of ids) assert.equal(upstream.users.get(id)!.role, 'member')
    })

    test('a write endpoint answering its own 404 (JSON) for records the read shows: failed (rejected), and the operation halts', async () => {
      const ids = Array.from({ length: 6 }, (_, i) => userIdOf(i + 1))
      upstream.onWrite = (id) => {
        return { refuse: { status: 404, body: { error: 'no such account in this tenant' } } }
      }
      const before = upstream.totalWrites()
      const { operation, results } = await run(ids, 'tenant')
      assert.equal(operation.state, 'halted', JSON.stringify(operation))
      assert.equal(operation.halt_reason.rule, 'validation_failures', JSON.stringify(operation.halt_reason))
      assert.equal(upstream.totalWrites() - before, 3)
      const refused = results.filter((r) => r.outcome !== 'pending')
      assert.deepEqual(refused.map((r) => [r.outcome, r.reason]), refused.map(() => ['failed', 'rejected']), JSON.stringify(refused))
      assert.match(refused[0].error, /no such account in this tenant/)
    })

    test('a write answered 404 for a record deleted after its read: skipped, missing', async () => {
      const id = userIdOf(11)
      upstream.onWrite = (written) => {
        upstream.users.delete(written)
        return { refuse: { status: 404, body: { error: 'not found' } } }
      }
      const { operation, results } = await run([id], 'deleted')
      assert.equal(operation.state, 'completed_with_skips', JSON.stringify(operation))
      assert.deepEqual([results[0].outcome, results[0].reason], ['skipped', 'missing'], JSON.stringify(results[0]))
      assert.match(results[0].error, /no longer exists/)
    })

    test('a 409 after another writer changed the record (an optimistic lock): skipped, version_changed, saying so', async () => {
      const id = userIdOf(10)
      upstream.onWrite = () => ({ refuse: { status: 409, body: { message: 'the object has been modified; please apply your changes to the latest version' }, changedBy: { name: 'renamed meanwhile' } } })
      const { operation, results } = await run([id], 'modified')
      assert.equal(operation.state, 'completed_with_skips', JSON.stringify(operation))
      assert.deepEqual([results[0].outcome, results[0].reason], ['skipped', 'version_changed'], JSON.stringify(results[0]))
      assert.match(results[0].error, /the object has been modified/)
      assert.match(results[0].error, /changed since it was read/)
    })
  })
}
