import type { PlanRow } from '../store/index.js'
import { approvalsOf } from './approval-decisions.js'
import { policyNow } from './approval-policy.js'
import { configDriftOf, recordDriftSeen } from './config-drift.js'
import { type PlanContext, selectionOf, toRecord } from './plan-context.js'

/**
 * How the config this process runs moved under a plan (its drift), judged and recorded as every view of it records it:
 * a drift shown is a drift recorded, and the approvals given before it do not count again if the config is put back.
 * A committed or rejected plan has none to record.
 */
export async function judgeConfigMoves(ctx: PlanContext, stored: PlanRow, now: string) {
  const selection = await selectionOf(ctx, stored)
  const policy = policyNow(ctx.catalogue, stored, selection.count)
  const drift = stored.state === 'committed' || stored.state === 'rejected' ? [] : configDriftOf(ctx, stored, toRecord(stored), policy)
  const row: PlanRow = { ...stored, config_drifted_at: await recordDriftSeen(ctx, stored, drift, now) }
  return { selection, policy, drift, row }
}

/**
 * Records, for every plan a commit could still take (pending or approved), the config drift and the shortened approval
 * TTL the config this process runs makes, as a view would (`judgeConfigMoves`, `approvalsOf` storing each cut). Run
 * when a gateway opens on a config: recorded only when something viewed the plan, a drift nobody looked at left no
 * mark, and an approval given before it counted again once the config was put back. Answers the plans found drifted
 * and those that could not be judged (each with why), for the caller to log; one plan's fault never stops the rest.
 */
export async function recordOpenPlansMoves(ctx: PlanContext): Promise<{ readonly drifted: string[]; readonly unjudged: { readonly plan_id: string; readonly error: string }[] }> {
  const open = await ctx.db.selectFrom('plans').selectAll().where('state', 'in', ['pending', 'approved']).orderBy('created_at').execute()
  const drifted: string[] = []
  const unjudged: { plan_id: string; error: string }[] = []
  for (const stored of open) {
    try {
      const now = ctx.nowIso()
      const { policy, drift, row } = await judgeConfigMoves(ctx, stored, now)
      // each approval's TTL cut stored too: a cut nobody viewed would lapse for no one once the TTL is put back up
      await approvalsOf(ctx, row, now, policy.ttl_minutes)
      if (drift.length > 0) drifted.push(stored.id)
    } catch (error) {
      unjudged.push({ plan_id: stored.id, error: error instanceof Error ? error.message : String(error) })
    }
  }
  return { drifted, unjudged }
}
