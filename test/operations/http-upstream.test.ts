import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withUsersGateway } from './support/users-gateway.js'

for (const kind of STORE_KINDS) {
  describe(`bulk change on a plain-HTTP upstream (${kind} store)`, () => {
    test('a role change over 800 users halts at the first response that says "admin"; later targets stay pending', () =>
      withUsersGateway(kind, 800, { concurrency: 1, batch_size: 50 }, async ({ upstream, agent, reviewer }) => {
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' }, page_size: 200 }, { type: 'set_role', role: 'viewer' })
        assert.equal(selection.count, 800)
        assert.equal(selection.consistent_snapshot, false)
        // A deployment changes the endpoint after 300 writes: a missing field now defaults the role to admin.
        upstream.onWrite = (_id, n) => (n > 300 ? { roleOverride: 'admin' } : undefined)

        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `roles-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operation = await waitForOperation(agent, commit.body.operation_id, 120_000)

        assert.equal(operation.state, 'halted')
        assert.equal(operation.halt_reason.rule, 'effect_contradicted')
        assert.equal(operation.halt_reason.target_id, userIdOf(301))
        assert.match(operation.halt_reason.message, /"role" is "admin" where "viewer" was approved/)
        assert.deepEqual(operation.counts, { pending: 499, in_flight: 0, succeeded: 300, failed: 1, skipped: 0, unknown: 0 })
        assert.equal(upstream.totalWrites(), 301, 'the blast radius stops at the first contradicting response')
        assert.ok([...upstream.writes.values()].every((n) => n === 1))

        const failed = await allResults(agent, commit.body.operation_id, 'failed')
        assert.deepEqual(failed.map((r) => [r.id, r.reason, r.upstream_status]), [[userIdOf(301), 'effect_contradicted', 200]])
        assert.deepEqual(failed[0].after, { role: 'admin' }, 'what the upstream answered is on record')
        const pending = await allResults(agent, commit.body.operation_id, 'pending')
        assert.equal(pending.length, 499)
        assert.equal(pending[0].id, userIdOf(302))
        assert.ok(pending.every((r) => !upstream.writes.has(r.id)), 'no pending target reached the upstream')
        assert.equal(upstream.users.get(userIdOf(302))!.role, 'member')
      }))

    test('without a snapshot, membership that changes between batches halts the operation before the changed batch is written', () =>
      withUsersGateway(kind, 40, { concurrency: 2, batch_size: 10 }, async ({ upstream, agent, reviewer }) => {
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        assert.equal(selection.count, 40)
        // After the first batch has been written, a member of the second batch leaves and another is touched.
        upstream.onWrite = (_id, n) => {
          if (n === 10) {
            upstream.users.delete(userIdOf(15))
            const touched = upstream.users.get(userIdOf(27))!
            upstream.users.set(touched.id, { ...touched, version: touched.version + 1 })
          }
        }
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', params: { role: 'viewer' } } }, { 'idempotency-key': `members-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operation = await waitForOperation(agent, commit.body.operation_id)
        assert.equal(operation.state, 'halted')
        assert.equal(operation.halt_reason.rule, 'membership_changed')
        assert.equal(operation.halt_reason.target_id, userIdOf(15))
        assert.match(operation.halt_reason.message, /no longer exists/)
        assert.deepEqual([operation.counts.succeeded, operation.counts.pending], [10, 30])
        assert.equal(upstream.totalWrites(), 10, 'nothing of the changed batch was written')
      }))
  })
}
