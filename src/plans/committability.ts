import { type Actor, WarrantError } from '../contract/index.js'
import { approvalsOf } from './approval-decisions.js'
import { approversOrRefusal, rejectedPlan } from './approval-holds.js'
import { policyNow, standingStillApplies } from './approval-policy.js'
import { COMPENSATE, planInActionScope } from './compensation.js'
import { assertConfigUnchanged } from './config-drift.js'
import { type CanonicalAction, type PlanContext, loadRowAt, scoped, selectionOf, toRecord } from './plan-context.js'
import type { CommittablePlan } from './plan-service.js'

/**
 * Everything is re-checked at commit time rather than trusted from the stored state: approvals lapse, selections
 * expire, configs and environments change between review and commit. Expiry is judged at the store's now, read with
 * the plan's row: an instance whose clock runs slow must not commit on what has lapsed for the others.
 */
export async function assertCommittable(
  ctx: PlanContext,
  actor: Actor,
  planId: string,
  expected?: string | { readonly plan_digest?: string; readonly selection_digest?: string },
): Promise<CommittablePlan> {
  const { row, now } = await loadRowAt(ctx, planId)
  const action = JSON.parse(row.action) as CanonicalAction
  scoped(actor, row.resource)
  if (!planInActionScope(actor, { resource: row.resource, action, compensates: row.compensates }))
    scoped(actor, row.resource, row.compensates ? COMPENSATE : action.type)
  if (row.state === 'committed') throw new WarrantError('conflict', `plan ${planId} is already committed`, { plan_id: planId, state: row.state })
  if (row.state === 'rejected') throw rejectedPlan(planId, row.selection_id)

  if (typeof expected === 'string') {
    if (expected !== row.plan_digest && expected !== row.selection_digest)
      throw new WarrantError('digest_mismatch', `the expected digest ${expected} is neither this plan's digest nor its selection's`, { expected, plan_digest: row.plan_digest, selection_digest: row.selection_digest })
  } else if (expected) {
    if (expected.plan_digest !== undefined && expected.plan_digest !== row.plan_digest)
      throw new WarrantError('digest_mismatch', `the expected plan digest ${expected.plan_digest} is not this plan's (${row.plan_digest})`, { expected: expected.plan_digest, actual: row.plan_digest })
    if (expected.selection_digest !== undefined && expected.selection_digest !== row.selection_digest)
      throw new WarrantError('digest_mismatch', `the expected selection digest ${expected.selection_digest} is not this plan's selection's (${row.selection_digest})`, {
        expected: expected.selection_digest,
        actual: row.selection_digest,
      })
  }

  const selection = await selectionOf(ctx, row)
  if (selection.digest !== row.selection_digest)
    throw new WarrantError('digest_mismatch', `selection ${selection.selection_id} changed since the plan was made`, { plan_id: planId })
  ctx.selections.assertUsable(selection, now)

  const resource = ctx.catalogue.get(row.resource)
  const plan = toRecord(row)
  const policy = policyNow(ctx.catalogue, row, selection.count)
  const actionConfig = await assertConfigUnchanged(ctx, row, plan, policy, now)

  if (policy.reviewers_needed === 0) {
    // No reviewer was needed only because a standing approval matched; the config may have changed since.
    const current = plan.compensates ? null : await standingStillApplies(ctx, resource, selection, action.type, policy.standing_approval)
    if (current) return { plan: { ...plan, state: 'approved' }, selection, actionConfig, approvals: [], standing_approval: current, reviewers_needed: 0, approval_ttl_minutes: policy.ttl_minutes, run_limits: policy.run_limits ?? null }
    throw new WarrantError('not_approved', `standing approval "${policy.standing_approval}" no longer covers this plan; it needs a reviewer's approval`, { plan_id: planId })
  }
  const approvers = approversOrRefusal(row, await approvalsOf(ctx, row, now, policy.ttl_minutes), policy.reviewers_needed, now, policy.reason)
  return {
    plan: { ...plan, state: 'approved' },
    selection,
    actionConfig,
    approvals: approvers.map((a) => ({ principal: a.principal, decided_at: a.decided_at, expires_at: a.expires_at })),
    standing_approval: null,
    reviewers_needed: policy.reviewers_needed,
    approval_ttl_minutes: policy.ttl_minutes,
    run_limits: policy.run_limits ?? null,
  }
}
