import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { selectProposeApprove, waitForOperation } from './support/flow.js'
import { withUsersGateway } from './support/users-gateway.js'

const action = { type: 'set_role', role: 'viewer' }

/**
 * An operation's follow-up plans (its remainder, its compensation) were named nowhere on the operation: once the rest
 * was proposed, a reviewer reading it could not tell, and was offered to propose it again. `follow_ups` names the
 * latest live (pending, approved or committed) plan of each kind, its state, and its operation once committed; a
 * rejected one is not named, since proposing again makes a new plan (watched fail before the fix: no follow_ups).
 */
for (const kind of STORE_KINDS) {
  describe(`an operation names its follow-up plans (${kind} store)`, () => {
    test('none at first; the remainder and the compensation once proposed; committed with its operation; rejected, none', () =>
      withUsersGateway(kind, 12, { concurrency: 1, batch_size: 10 }, async ({ agent, reviewer, upstream }) => {
        upstream.onWrite = (_id, n) => (n === 4 ? { refuse: { status: 401, body: { error: 'no' } } } : undefined)
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `follow-${kind}` })
        const halted = await waitForOperation(agent, commit.body.operation_id)
        assert.equal(halted.state, 'halted', JSON.stringify(halted))
        const id = halted.operation_id
        assert.deepEqual(halted.follow_ups, { remainder: null, compensation: null })
        upstream.onWrite = () => undefined

        const rest = (await agent('POST', `/v1/operations/${id}/remainder`)).body
        const undo = await agent('POST', `/v1/operations/${id}/compensation`)
        assert.equal(undo.status, 201, JSON.stringify(undo.body))
        let view = (await reviewer('GET', `/v1/operations/${id}`)).body
        assert.deepEqual(view.follow_ups, {
          remainder: { plan_id: rest.plan_id, state: 'pending', operation_id: null },
          compensation: { plan_id: undo.body.plan_id, state: 'pending', operation_id: null },
        })

        // committed: the remainder names its operation; the rejected compensation is no longer named
        assert.equal((await reviewer('POST', `/v1/plans/${rest.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: rest.plan_digest })).status, 201)
        const run = await agent('POST', `/v1/plans/${rest.plan_id}/commit`, { expected_digest: rest.plan_digest }, { 'idempotency-key': `rest-${kind}` })
        assert.equal(run.status, 202, JSON.stringify(run.body))
        await waitForOperation(agent, run.body.operation_id)
        const rejected = await reviewer('POST', `/v1/plans/${undo.body.plan_id}/approvals`, { decision: 'reject', expected_plan_digest: undo.body.plan_digest })
        assert.equal(rejected.status, 201, JSON.stringify(rejected.body))
        view = (await agent('GET', `/v1/operations/${id}`)).body
        assert.deepEqual(view.follow_ups, { remainder: { plan_id: rest.plan_id, state: 'committed', operation_id: run.body.operation_id }, compensation: null })
        // the remainder's own operation has none of its own yet
        assert.deepEqual((await agent('GET', `/v1/operations/${run.body.operation_id}`)).body.follow_ups, { remainder: null, compensation: null })
      }))
  })
}
