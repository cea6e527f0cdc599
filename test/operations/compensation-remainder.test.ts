import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, waitForOperation, type Caller } from './support/flow.js'
import { withFaultGateway, type FaultGateway } from './support/fault-gateway.js'
import { userIdOf } from './support/users-upstream.js'

const COUNT = 12
const EXECUTION = { concurrency: 1, batch_size: 4, halt_after_consecutive_errors: 1, reconcile_settle_seconds: 0 }
const ids = Array.from({ length: COUNT }, (_, i) => userIdOf(i + 1))

/** The original operation (every user set to viewer, all succeeded) and its compensation proposed and approved. */
async function approvedCompensation(ctx: FaultGateway, key: string): Promise<{ original: string; compensation: any }> {
  const original = await ctx.commit(key)
  assert.equal((await ctx.finished(original)).state, 'succeeded')
  assert.ok(ids.every((id) => ctx.upstream.users.get(id)!.role === 'viewer'))
  const proposed = await ctx.agent('POST', `/v1/operations/${original}/compensation`)
  assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
  const approval = await ctx.reviewer('POST', `/v1/plans/${proposed.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: proposed.body.plan_digest })
  assert.equal(approval.status, 201, JSON.stringify(approval.body))
  return { original, compensation: proposed.body }
}

async function commitPlan(agent: Caller, plan: any, key: string): Promise<any> {
  const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  return waitForOperation(agent, commit.body.operation_id, 30_000)
}

/**
 * An incident's undo that halts (a stop rule, a rate limit) left the records it never sent half-restored, with no path
 * to finish: "propose the rest" was refused for a compensation's operation, and proposing the compensation of the
 * original again answered the halted one. The rest of a halted compensation is now a new compensation of the same
 * original operation over exactly its pending targets, their before-values and expected values copied from the halted
 * plan (nothing read again), reviewed and committed like any (watched fail before the fix: 409 "its remainder is not
 * proposed").
 */
for (const kind of STORE_KINDS) {
  describe(`the remainder of a halted compensation (${kind} store)`, () => {
    test('restores exactly the pending targets with their recorded before-values; every record restored once', () =>
      withFaultGateway(kind, COUNT, EXECUTION, async (ctx) => {
        const { upstream, agent, reviewer } = ctx
        const { original, compensation } = await approvedCompensation(ctx, `orig-${kind}`)
        // the compensation's own read of user 6 before its write is answered 429 for a day: it halts, 6..12 never sent
        let armed = true
        upstream.onReadAnswer = (id) => (armed && id === userIdOf(6) ? ((armed = false), [429, { error: 'slow down' }, { 'retry-after': '86400' }]) : undefined)
        const halted = await commitPlan(agent, compensation, `undo-${kind}`)
        assert.equal(halted.state, 'halted', JSON.stringify(halted))
        assert.equal(halted.halt_reason.rule, 'retry_after_too_long')
        assert.deepEqual([halted.counts.succeeded, halted.counts.pending, halted.counts.unknown], [5, 7, 0], JSON.stringify(halted.counts))
        const pendingIds = (await allResults(agent, halted.operation_id, 'pending')).map((r) => r.id)
        assert.deepEqual(pendingIds, ids.slice(5))
        assert.equal(upstream.writeLog.length, COUNT + 5)

        // one pending user changed since by someone else: the rest's preview reads the pending targets, as the
        // compensation's did, and counts it as no longer holding what the operation wrote (was: never read, failing_now
        // null and no changing count; watched fail before the fix, stop 44)
        upstream.users.get(userIdOf(8))!.role = 'admin'
        const proposed = await agent('POST', `/v1/operations/${halted.operation_id}/remainder`)
        assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
        const rest = proposed.body
        assert.equal(rest.precondition.failing_now, 1, JSON.stringify(rest.precondition))
        assert.equal(rest.changes.changing, 6, JSON.stringify(rest.changes))
        upstream.users.get(userIdOf(8))!.role = 'viewer'
        assert.equal(rest.compensates, original, 'a compensation of the original operation, under its scope rules')
        assert.equal(rest.action.type, 'compensate')
        assert.equal(rest.target_count, 7)
        assert.equal(rest.action.params.targets, 7, 'its displayed params count the pending targets alone')
        assert.equal(compensation.action.params.targets, COUNT)
        assert.equal(rest.action.params.write_action, 'set_role')
        assert.deepEqual(rest.action.params.fields, compensation.action.params.fields)
        assert.equal(rest.environment, compensation.environment)
        assert.notEqual(rest.plan_digest, compensation.plan_digest)
        assert.equal(rest.state, 'pending', 'the halted compensation approval never counts')
        const selection = await agent('GET', `/v1/selections/${rest.selection_id}`)
        assert.equal(selection.body.remainder_of, halted.operation_id)
        const members = await agent('GET', `/v1/selections/${rest.selection_id}/records?limit=100`)
        assert.deepEqual(members.body.records.map((m: any) => m.id), pendingIds)
        // the stored params: exactly the pending targets, their values copied from the halted plan
        const row = await ctx.fx.gateway.store.db.selectFrom('plans').select(['action']).where('id', '=', rest.plan_id).executeTakeFirstOrThrow()
        const params = JSON.parse(row.action).params
        assert.deepEqual(Object.keys(params.restore).sort(), pendingIds)
        for (const id of pendingIds) {
          assert.deepEqual(params.restore[id], { role: 'member' })
          assert.deepEqual(params.expect[id], { role: 'viewer' })
        }

        // asked again: the same plan; proposing the original's compensation again: the halted one, no other
        const again = await agent('POST', `/v1/operations/${halted.operation_id}/remainder`)
        assert.equal(again.status, 200, JSON.stringify(again.body))
        assert.equal(again.body.plan_id, rest.plan_id)
        const undoAgain = await agent('POST', `/v1/operations/${original}/compensation`)
        assert.equal(undoAgain.status, 200, JSON.stringify(undoAgain.body))
        assert.equal(undoAgain.body.plan_id, compensation.plan_id)

        const approval = await reviewer('POST', `/v1/plans/${rest.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: rest.plan_digest })
        assert.equal(approval.status, 201, JSON.stringify(approval.body))
        const finished = await commitPlan(agent, rest, `rest-${kind}`)
        assert.equal(finished.state, 'succeeded', JSON.stringify(finished))
        assert.equal(finished.counts.succeeded, 7)
        // counted at the upstream: each user written once by the operation and once restored, nothing twice
        assert.ok(ids.every((id) => upstream.users.get(id)!.role === 'member'), 'every record restored')
        for (const id of ids) assert.equal(upstream.writes.get(id), 2, id)
        assert.equal(upstream.writeLog.length, 2 * COUNT)
        assert.deepEqual(upstream.writeLog.slice(COUNT + 5), pendingIds, 'the rest wrote the pending targets alone')
        const plans = await ctx.fx.gateway.store.db.selectFrom('plans').select('id').where('compensates', '=', original).execute()
        assert.deepEqual(plans.map((p) => p.id).sort(), [compensation.plan_id, rest.plan_id].sort())
        const nothing = await agent('POST', `/v1/operations/${finished.operation_id}/remainder`)
        assert.equal(nothing.status, 409, JSON.stringify(nothing.body))
        assert.match(nothing.body.error.message, /nothing left/)
      }))

    test('refused while a target is unknown, and after the original action\'s write or set was redefined', () =>
      withFaultGateway(kind, COUNT, EXECUTION, async (ctx) => {
        const { fx, upstream, agent } = ctx
        const { compensation } = await approvedCompensation(ctx, `orig2-${kind}`)
        // the compensation's write of user 3 is cut (no answer): unknown, and the run halts on it
        upstream.onWrite = (t) => (t.n === COUNT + 3 ? t.destroy() : t.send(...t.apply()))
        const halted = await commitPlan(agent, compensation, `undo2-${kind}`)
        assert.equal(halted.state, 'halted', JSON.stringify(halted))
        assert.equal(halted.counts.unknown, 1, JSON.stringify(halted.counts))
        const unknown = await agent('POST', `/v1/operations/${halted.operation_id}/remainder`)
        assert.equal(unknown.status, 409, JSON.stringify(unknown.body))
        assert.match(unknown.body.error.message, new RegExp(`/v1/operations/${halted.operation_id}/reconcile`))
        const reconciled = await agent('POST', `/v1/operations/${halted.operation_id}/reconcile`)
        assert.equal(reconciled.status, 200, JSON.stringify(reconciled.body))

        // another process on the same store whose set_role writes elsewhere, or sets otherwise (its `set` alone
        // redefined: watched fail before the fix, stop 44): the rest would be written otherwise
        const redefinitions: ((setRole: Record<string, any>) => void)[] = [(a) => (a.write.path = '/v2/users/{id}'), (a) => (a.set = { role: 'viewer' })]
        for (const [n, redefine] of redefinitions.entries()) {
          await fx.gateway.audit.flush()
          const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
          redefine(config.resources.users.actions.set_role)
          const moved = await openGateway({ config, executors: false, log: createLogger({ level: 'silent' }) })
          try {
            const issued = await moved.principals.issue({ name: `users-agent-${n + 2}`, role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })
            const actor = await moved.principals.authenticate(issued.token, 'http')
            const selectionsBefore = (await moved.store.db.selectFrom('selections').select('id').execute()).length
            await assert.rejects(moved.operations.proposeRemainder(actor, halted.operation_id), (e: any) => {
              assert.equal(e.code, 'conflict', e.message)
              assert.equal(e.details?.reason, 'action_redefined', JSON.stringify(e.details))
              assert.match(e.message, /set_role/)
              return true
            })
            assert.equal((await moved.store.db.selectFrom('selections').select('id').execute()).length, selectionsBefore, 'nothing frozen')
            await moved.audit.flush()
          } finally {
            await moved.close()
          }
        }
        const pending = (await allResults(agent, halted.operation_id, 'pending')).map((r) => r.id)
        const proposed = await agent('POST', `/v1/operations/${halted.operation_id}/remainder`)
        assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
        assert.equal(proposed.body.target_count, pending.length)
        assert.ok(!pending.includes(userIdOf(3)))
      }))
  })
}
