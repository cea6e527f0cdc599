import type { ActionConfig } from '../config/index.js'
import { agentTexts } from '../selections/index.js'
import type { PlanRow } from '../store/index.js'
import { actionConfigOf } from './actions.js'
import { approvalExpiredAt, approvalsOf, distinctApprovers, effectiveState } from './approval-decisions.js'
import type { StoredChanges } from './change-summary.js'
import { displayParams } from './compensation.js'
import { judgeConfigMoves } from './config-moves.js'
import { type PlanContext, toRecord } from './plan-context.js'
import { reviewLink } from './review-link.js'
import type { PlanView } from './schemas.js'

/** The plan as a reviewer sees it: the stored summary and policy, with the approval state as of `now` (the store's, read with the row). */
export async function viewOf(ctx: PlanContext, stored: PlanRow, now: string = ctx.nowIso()): Promise<PlanView> {
  // a drift shown is a drift recorded: the approvals given before it do not count again if the config is put back
  const { selection, policy, drift, row } = await judgeConfigMoves(ctx, stored, now)
  const changes = JSON.parse(stored.changes_summary) as StoredChanges
  const entries = await approvalsOf(ctx, row, now, policy.ttl_minutes)
  const state = effectiveState(row, selection, policy, entries, now)
  const approvers = distinctApprovers(entries)
  const rejection = entries.find((e) => e.decision === 'reject')
  const plan = toRecord(row, state)
  let config: ActionConfig | null = null
  try {
    config = actionConfigOf(ctx, plan)
  } catch {
    // A plan whose action was removed from the config must still be viewable, to be rejected or understood.
    config = null
  }
  const params = displayParams(plan)
  const expiredAt = state === 'pending' ? approvalExpiredAt(row, entries, policy, now) : null
  const still = state === 'rejected' || state === 'expired' || state === 'committed' ? 0 : Math.max(0, policy.reviewers_needed - approvers.length)
  return {
    plan_id: row.id,
    selection_id: row.selection_id,
    resource: row.resource,
    environment: row.environment,
    action: { type: plan.action.type, params, description: config?.description ?? '(the action is no longer configured)' },
    plan_digest: row.plan_digest,
    selection_digest: row.selection_digest,
    target_count: Number(row.target_count),
    changes: { summary: changes.summary, uniform: changes.uniform, changing: changes.changing ?? null, changes_url: `/v1/plans/${row.id}/changes` },
    precondition: { filter: row.compensates ? {} : (config?.precondition ?? {}), failing_now: changes.failing_now, per_target: row.compensates !== null },
    reversible: config?.reversible ?? false,
    run_limits: policy.run_limits ?? null,
    approval: { required: policy.required, reviewers_needed: policy.reviewers_needed, reason: policy.reason, standing_approval: policy.standing_approval, ttl_minutes: policy.ttl_minutes },
    approval_state: {
      approved: state === 'approved' || state === 'committed',
      approved_by: approvers.map((a) => ({ principal: a.principal, name: a.name, approved_at: a.decided_at, expires_at: a.expires_at })),
      still_needed: still,
      expired: expiredAt !== null,
      expired_at: expiredAt,
      rejected_by: rejection ? { principal: rejection.principal, name: rejection.name, decided_at: rejection.decided_at, comment: rejection.comment } : null,
      who_can_approve:
        drift.length > 0
          ? `nobody: ${drift.map((d) => d.message).join('; ')}; it can be rejected, not approved or committed while the config differs, and an approval given before this drift does not count again if the config is put back`
        : !selection.complete
        ? `nobody: the selection is incomplete and can be reviewed, never approved; recover it with POST /v1/selections/${selection.selection_id}/recover`
        : policy.reviewers_needed === 0
          ? `nobody needs to: standing approval "${policy.standing_approval}" covers this plan`
          : 'a reviewer or admin in scope, other than the proposer and those who already approved',
    },
    // expires_at is the end that holds now (see approval-ttl.ts); the cut's detail is the refusal's to say
    approvals: entries.map(({ ttl_cut: _cut, ...e }) => e),
    state,
    config_drift: drift,
    proposed_by: row.proposed_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
    // the groups stored with the selection at its freeze; the agent's words over every member, once per process: each surface renders this one answer
    lookalike_ids: await ctx.selections.lookalikes(selection, agentTexts(params)),
    ...reviewLink(ctx.reviewPages?.(), row.id),
    compensates: row.compensates,
    selection: {
      count: selection.count,
      digest: selection.digest,
      complete: selection.complete,
      consistent_snapshot: selection.consistent_snapshot,
      expires_at: selection.expires_at,
      url: `/v1/selections/${selection.selection_id}`,
      exclusions: selection.exclusions.map((e) => ({ rule: e.rule, count: e.count })),
    },
  }
}
