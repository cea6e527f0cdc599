import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withUsersGateway } from './support/users-gateway.js'

const action = { type: 'set_role', role: 'viewer' }

/** Commits an approved set_role over every active user and waits for it to finish. */
async function commitAll(agent: Caller, reviewer: Caller, key: string): Promise<{ plan: any; operation: any }> {
  const { selection, plan } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
  const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  return { plan, operation: await waitForOperation(agent, commit.body.operation_id) }
}

/**
 * "Propose the rest": a halted operation's never-sent targets stayed pending for good, with no path to finish them
 * but selecting again by hand. The remainder is a new plan of the same action over exactly those targets at their
 * frozen versions, reviewed and committed like any plan (watched fail before the feature: 404).
 */
for (const kind of STORE_KINDS) {
  describe(`the remainder of a halted operation (${kind} store)`, () => {
    test('holds exactly the pending targets at their frozen versions; committed, it writes them once and never a record changed since', () =>
      withUsersGateway(kind, 20, { concurrency: 1, batch_size: 10 }, async ({ fx, upstream, agent, reviewer }) => {
        upstream.onWrite = (_id, n) => (n === 5 ? { refuse: { status: 401, body: { error: 'this credential may not change roles' } } } : undefined)
        const { plan: first, operation } = await commitAll(agent, reviewer, `halt-${kind}`)
        assert.equal(operation.state, 'halted', JSON.stringify(operation))
        assert.deepEqual([operation.counts.succeeded, operation.counts.failed, operation.counts.pending], [4, 1, 15])
        upstream.onWrite = () => undefined
        const pendingIds = (await allResults(agent, operation.operation_id, 'pending')).map((r) => r.id)
        // another client changes a pending record after the halt: the remainder must not write it blind
        const moved = userIdOf(18)
        const before = upstream.users.get(moved)!
        upstream.users.set(moved, { ...before, role: 'owner', version: before.version + 1 })

        const proposed = await agent('POST', `/v1/operations/${operation.operation_id}/remainder`)
        assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
        const rest = proposed.body
        assert.equal(rest.target_count, 15)
        assert.equal(rest.action.type, 'set_role')
        assert.deepEqual(rest.action.params, first.action.params)
        assert.equal(rest.environment, first.environment)
        assert.notEqual(rest.plan_digest, first.plan_digest)
        assert.notEqual(rest.selection_digest, first.selection_digest)
        assert.equal(rest.state, 'pending', 'the old approval never counts')
        const selection = await agent('GET', `/v1/selections/${rest.selection_id}`)
        assert.equal(selection.body.complete, true)
        assert.equal(selection.body.remainder_of, operation.operation_id)
        const members = await agent('GET', `/v1/selections/${rest.selection_id}/records?limit=100`)
        assert.deepEqual(members.body.records.map((m: any) => m.id), pendingIds)
        assert.ok(members.body.records.every((m: any) => m.version === '1'), 'frozen versions, not read again')

        const again = await agent('POST', `/v1/operations/${operation.operation_id}/remainder`)
        assert.equal(again.status, 200, JSON.stringify(again.body))
        assert.equal(again.body.plan_id, rest.plan_id)

        const unapproved = await agent('POST', `/v1/plans/${rest.plan_id}/commit`, { expected_digest: rest.plan_digest }, { 'idempotency-key': `rest-early-${kind}` })
        assert.equal(unapproved.status, 403, JSON.stringify(unapproved.body))
        const approval = await reviewer('POST', `/v1/plans/${rest.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: rest.plan_digest })
        assert.equal(approval.status, 201, JSON.stringify(approval.body))
        const commit = await agent('POST', `/v1/plans/${rest.plan_id}/commit`, { expected_digest: rest.plan_digest }, { 'idempotency-key': `rest-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const finished = await waitForOperation(agent, commit.body.operation_id)
        // the changed record is in the second batch: the first is written, then its re-read halts the run as on any plan
        assert.equal(finished.state, 'halted', JSON.stringify(finished))
        assert.deepEqual([finished.halt_reason.rule, finished.halt_reason.target_id], ['membership_changed', moved])
        assert.deepEqual([finished.counts.succeeded, finished.counts.pending], [10, 5])
        assert.equal(upstream.users.get(moved)!.role, 'owner', 'the record changed since is not overwritten')
        assert.equal(upstream.writes.get(moved) ?? 0, 0)
        assert.ok([...upstream.writes.values()].every((n) => n === 1), 'no target is written twice')
        for (let i = 1; i <= 4; i++) assert.equal(upstream.writes.get(userIdOf(i)), 1)
        assert.equal(upstream.totalWrites(), 5 + 10)
        // its own remainder holds the five it never sent, the changed one still at the version first frozen
        const next = await agent('POST', `/v1/operations/${finished.operation_id}/remainder`)
        assert.equal(next.status, 201, JSON.stringify(next.body))
        assert.equal(next.body.target_count, 5)
        const again2 = await agent('POST', `/v1/operations/${operation.operation_id}/remainder`)
        assert.equal(again2.status, 200, 'the committed remainder stays the answer for the first operation')
        assert.equal(again2.body.plan_id, rest.plan_id)

        // audited as compensation is: each request's row names the operation and the plan it answered with
        const audit = await fx.gateway.store.db.selectFrom('audit_events').select(['action', 'operation_id', 'plan_id']).where('action', '=', 'POST /v1/operations/:id/remainder').orderBy('seq').execute()
        assert.deepEqual(
          audit.map((a) => [a.operation_id, a.plan_id]),
          [[operation.operation_id, rest.plan_id], [operation.operation_id, rest.plan_id], [finished.operation_id, next.body.plan_id], [operation.operation_id, rest.plan_id]],
        )
      }))

    test('refused while running, while a target is unknown (reconcile first), with nothing left, and out of scope', () =>
      withUsersGateway(kind, 12, { concurrency: 1, batch_size: 10, halt_after_consecutive_errors: 1, reconcile_settle_seconds: 0 }, async ({ fx, upstream, agent, reviewer }) => {
        let release!: () => void
        const held = new Promise<void>((r) => (release = r))
        let reset = true
        upstream.onWrite = (_id, n) => (n === 1 ? { hold: held } : n === 3 && reset ? { reset: true } : undefined)
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `unknown-${kind}` })
        const id = commit.body.operation_id
        const running = await agent('POST', `/v1/operations/${id}/remainder`)
        assert.equal(running.status, 409, JSON.stringify(running.body))
        assert.match(running.body.error.message, /still (pending|running)/)
        release()
        const halted = await waitForOperation(agent, id)
        assert.equal(halted.state, 'halted', JSON.stringify(halted))
        assert.equal(halted.counts.unknown, 1, JSON.stringify(halted.counts))
        const unknown = await agent('POST', `/v1/operations/${id}/remainder`)
        assert.equal(unknown.status, 409, JSON.stringify(unknown.body))
        assert.match(unknown.body.error.message, /unknown/)
        assert.match(unknown.body.error.message, new RegExp(`/v1/operations/${id}/reconcile`))

        const other = (await fx.gateway.principals.issue({ name: 'demo-only', role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' } })).token
        const outsider = caller(fx.base, other)
        const [rest, undo] = [await outsider('POST', `/v1/operations/${id}/remainder`), await outsider('POST', `/v1/operations/${id}/compensation`)]
        assert.equal(rest.status, undo.status, JSON.stringify([rest.body, undo.body]))
        assert.equal(rest.body.error.code, undo.body.error.code)

        const reconciled = await agent('POST', `/v1/operations/${id}/reconcile`)
        assert.equal(reconciled.status, 200, JSON.stringify(reconciled.body))
        const proposed = await agent('POST', `/v1/operations/${id}/remainder`)
        assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
        const pending = (await allResults(agent, id, 'pending')).map((r) => r.id)
        assert.equal(proposed.body.target_count, pending.length)
        assert.ok(!pending.includes(userIdOf(3)) && !pending.includes(userIdOf(1)))

        reset = false
        const { operation: done } = await commitAll(agent, reviewer, `all-${kind}`)
        const nothing = await agent('POST', `/v1/operations/${done.operation_id}/remainder`)
        assert.equal(nothing.status, 409, JSON.stringify(nothing.body))
        assert.match(nothing.body.error.message, /nothing left/)
      }))
  })
}
