import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { startUsersUpstream, userIdOf, usersResourceConfig } from './support/users-upstream.js'

/**
 * A compensation restores the targets the operation is known to have changed; a target that ended `unknown` (its
 * write may have landed: here the upstream applied it, then the connection broke) is not among them. The plan
 * said "restore what operation … changed" and said nothing of it, so a reviewer approving the undo read that the
 * operation's changes would be undone while one record the upstream holds changed stays so. The plan says how
 * many such targets it leaves, and that reconciling first brings them in.
 */
for (const kind of STORE_KINDS) {
  describe(`a compensation of an operation with unknown targets (${kind} store)`, () => {
    test('says how many targets ended unknown and are not restored', async () => {
      const upstream = await startUsersUpstream(4)
      const fx = await startDemoGateway({ store: kind, count: 10, edit: (raw) => { raw.resources.users = usersResourceConfig(upstream.origin) } })
      try {
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        const action = { type: 'set_role', role: 'viewer' }
        const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { id: { in: [userIdOf(1), userIdOf(2), userIdOf(3)] } } }, action)
        // usr_0002's write is applied and answered, and the answer cut mid-body: no durable answer
        upstream.onWrite = (id) => (id === userIdOf(2) ? { cutAfter: 5 } : undefined)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `undo-unknown-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operation = await waitForOperation(agent, commit.body.operation_id)
        assert.deepEqual([operation.counts.succeeded, operation.counts.unknown], [2, 1], JSON.stringify(operation.counts))
        assert.equal(upstream.users.get(userIdOf(2))!.role, 'viewer', 'the unknown write landed')
        assert.equal((await allResults(agent, commit.body.operation_id, 'unknown'))[0].id, userIdOf(2))

        const proposal = await agent('POST', `/v1/operations/${commit.body.operation_id}/compensation`)
        assert.equal(proposal.status, 201, JSON.stringify(proposal.body))
        assert.equal(proposal.body.target_count, 2)
        assert.equal(proposal.body.action.params.unknown_not_restored, 1, JSON.stringify(proposal.body.action))
        assert.match(proposal.body.action.description, /1 target of the operation ended unknown .* not restored.*reconcile/)
      } finally {
        await fx.close()
        await upstream.close()
      }
    })
  })
}
