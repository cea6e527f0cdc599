import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { call, type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'

/**
 * A compensation is governed by the action it undoes: a token that may pause collection may propose, commit and
 * replay the commit of what restores a pause, without holding `compensate` as well. Before one rule served all
 * three, proposing and approving worked and the commit was refused (403: "compensate" outside the scope).
 */
for (const kind of STORE_KINDS) {
  describe(`compensation under the original action's scope (${kind} store)`, () => {
    let fx: GatewayFixture
    let pauser: Caller
    let resumer: Caller
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 400 })
      const token = async (name: string, action: string) =>
        (await fx.gateway.principals.issue({ name, role: 'agent', scopes: { resources: ['subscriptions'], actions: [action] } })).token
      const [p, r] = [await token('pauser', 'pause_collection'), await token('resumer', 'resume_collection')]
      pauser = (method, path, body, headers = {}) => call(fx.base, method, path, body, { authorization: `Bearer ${p}`, ...headers })
      resumer = (method, path, body, headers = {}) => call(fx.base, method, path, body, { authorization: `Bearer ${r}`, ...headers })
    })
    after(async () => {
      await fx?.close()
    })

    test('a pause_collection token proposes, commits and replays the compensation of its pause; a token of another action does none of it', async () => {
      const reviewers = [fx.as('reviewer'), fx.as('reviewer2')]
      const { plan } = await selectProposeApprove(pauser, reviewers, 'subscriptions', { filter: { status: 'past_due', collection: 'active', region: 'eu' } }, { type: 'pause_collection', params: { reason: 'scope' } })
      const commit = await pauser('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `pause-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      assert.equal((await waitForOperation(pauser, commit.body.operation_id)).state, 'succeeded')

      const refusedProposal = await resumer('POST', `/v1/operations/${commit.body.operation_id}/compensation`)
      assert.equal(refusedProposal.status, 403, JSON.stringify(refusedProposal.body))

      const compensation = await pauser('POST', `/v1/operations/${commit.body.operation_id}/compensation`)
      assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
      const undo = compensation.body
      for (const reviewer of reviewers.slice(0, Math.max(1, undo.approval.reviewers_needed))) {
        const approval = await reviewer('POST', `/v1/plans/${undo.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: undo.plan_digest })
        assert.equal(approval.status, 201, JSON.stringify(approval.body))
      }

      const refusedCommit = await resumer('POST', `/v1/plans/${undo.plan_id}/commit`, { expected_digest: undo.plan_digest }, { 'idempotency-key': `undo-other-${kind}` })
      assert.equal(refusedCommit.status, 403, JSON.stringify(refusedCommit.body))

      const committed = await pauser('POST', `/v1/plans/${undo.plan_id}/commit`, { expected_digest: undo.plan_digest }, { 'idempotency-key': `undo-${kind}` })
      assert.equal(committed.status, 202, JSON.stringify(committed.body))
      const replay = await pauser('POST', `/v1/plans/${undo.plan_id}/commit`, { expected_digest: undo.plan_digest }, { 'idempotency-key': `undo-${kind}` })
      assert.equal(replay.status, 200, JSON.stringify(replay.body))
      assert.equal(replay.body.operation_id, committed.body.operation_id)
      const done = await waitForOperation(pauser, committed.body.operation_id)
      assert.equal(done.state, 'succeeded', JSON.stringify(done.counts))
      assert.equal(done.counts.succeeded, plan.target_count)
    })
  })
}
