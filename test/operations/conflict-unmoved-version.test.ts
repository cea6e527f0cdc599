import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { idOf, startUnmovedUpstream, unmovedUsersResource } from './support/unmoved-upstream.js'

/**
 * A write refused 409 is judged on the record re-read: changed since its read, a skip for that change; as read, the
 * upstream refused the write itself (`failed`, `rejected`, counted toward the validation threshold). "As read" was
 * judged on the version and the precondition alone, so where the version never moves on writes (`rev` here, a
 * constant per record; an `updated_at` of one-second resolution), a record another writer renamed meanwhile, and
 * whose 409 said exactly that, read as unchanged: recorded as the upstream refusing the write itself, and counted
 * toward a halt. The whole record as read is compared.
 */
for (const kind of STORE_KINDS) {
  describe(`a 409 over a change the version does not show (${kind} store, real loopback upstream)`, () => {
    test('another writer renamed the record meanwhile, its rev unchanged: skipped version_changed, naming the field', { timeout: 120_000 }, async () => {
      const up = await startUnmovedUpstream(5)
      const fx = await startDemoGateway({ store: kind, count: 10, edit: (raw) => void (raw.resources.users = unmovedUsersResource(up.origin)) })
      try {
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        const action = { type: 'set_role', role: 'viewer' }
        const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { id: { in: [idOf(2)] } } }, action)
        // the record is renamed as the PATCH arrives, `rev` left as it was, and the upstream's own lock refuses it
        up.hooks.beforeApply = (id) => {
          up.users.set(id, { ...up.users.get(id)!, name: 'renamed meanwhile' })
          return { status: 409, body: { error: 'the record was modified by another request' } }
        }
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `unmoved-409-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operation = await waitForOperation(agent, commit.body.operation_id)
        const [result] = await allResults(agent, commit.body.operation_id)
        assert.deepEqual([result.outcome, result.reason], ['skipped', 'version_changed'], JSON.stringify(result))
        assert.match(result.error, /modified by another request/)
        assert.match(result.error, /name/)
        assert.match(result.error, /changed since it was read/)
        assert.equal(operation.state, 'completed_with_skips', JSON.stringify(operation))
        assert.equal(up.users.get(idOf(2))!.role, 'member', 'nothing was written')
      } finally {
        await fx.close()
        await up.close()
      }
    })
  })
}
