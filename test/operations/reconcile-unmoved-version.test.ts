import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { idOf, startUnmovedUpstream, unmovedUsersResource } from './support/unmoved-upstream.js'

// An upstream whose version field (`rev`) never moves on writes. The executor records the first write `unknown`
// (effect_unverified: the version did not move, so the answer proves nothing) and halts. Reconciled past the
// settle window, that target was concluded `failed` / not_applied ("the conditional write did not happen")
// while the record held the approved values: a version still at the frozen one is no evidence that the write
// did not land where the version never moves. A target so concluded is never compensated and never corrected
// (a correction needs the version to move), so the ledger said "not written" of a record Warrant changed.
for (const store of ['sqlite', 'postgres'] as const) {
  describe(`reconcile of a write whose version never moves (real loopback upstream, ${store} store)`, () => {
    test('a record holding the approved values at its frozen version is not concluded "not applied"', async () => {
      const up = await startUnmovedUpstream(3)
      const fx = await startDemoGateway({
        store,
        count: 20,
        edit: (raw) => {
          raw.resources.users = unmovedUsersResource(up.origin)
          raw.execution = { ...(raw.execution ?? {}), concurrency: 1, reconcile_settle_seconds: 0 }
        },
      })
      try {
        const token = (await fx.gateway.principals.issue({ name: 'users-agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
        const agent = caller(fx.base, token)
        const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `unmoved-${store}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const operationId = commit.body.operation_id
        const operation = await waitForOperation(agent, operationId)
        assert.equal(operation.state, 'halted', JSON.stringify(operation))
        const first = (await allResults(agent, operationId)).find((r) => r.id === idOf(1))
        assert.equal(first.outcome, 'unknown', JSON.stringify(first))
        assert.equal(up.users.get(idOf(1))!.role, 'viewer', 'the write landed upstream')

        const answer = await agent('POST', `/v1/operations/${operationId}/reconcile`)
        assert.equal(answer.status, 200, JSON.stringify(answer.body))
        const after = (await allResults(agent, operationId)).find((r) => r.id === idOf(1))
        assert.notEqual(after.outcome, 'failed', `the record holds the approved role, yet reconcile concluded: ${JSON.stringify(after)}`)
        assert.equal(after.outcome, 'unknown', JSON.stringify(after))
        assert.match(JSON.stringify(after), /holds the approved/)
      } finally {
        await fx.close()
        await up.close()
      }
    })
  })
}
