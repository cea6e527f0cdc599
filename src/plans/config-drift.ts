import { WarrantError, digestOf } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import { UPSTREAM_PARTS, sameUpstream } from '../resources/index.js'
import type { PlanRow } from '../store/index.js'
import { actionConfigOf } from './actions.js'
import { writtenSetDigestOf } from './compensation.js'
import type { StoredPolicy } from './approval-policy.js'
import type { PlanContext } from './plan-context.js'
import type { PlanRecord } from './plan-service.js'
import { runLimitsDriftOf, runLimitsOf } from './run-limits.js'
import type { ConfigDrift } from './schemas.js'

/**
 * How the config moved under a plan since it was proposed, each way (none: an empty list): the resource writes to
 * another environment, its connector points at another
 * upstream, the action was removed or redefined, the run's stop rules or pacing (`execution:`, the resource's
 * write_window) differ from those it
 * binds. No commit runs such a plan, so no approval of it is
 * taken either, and its view says why (a reviewer can still reject it).
 */
export function configDriftOf(ctx: Pick<PlanContext, 'catalogue' | 'execution'>, row: PlanRow, plan: PlanRecord, policy: StoredPolicy): ConfigDrift[] {
  const drift = placeDriftOf(ctx.catalogue, row)
  let actionConfig: ActionConfig | null = null
  try {
    actionConfig = actionConfigOf(ctx, plan)
  } catch (error) {
    if (!(error instanceof WarrantError) || error.code !== 'conflict') throw error
    drift.push({ code: 'action_removed', message: error.message })
  }
  if (actionConfig !== null && digestOf(actionConfig) !== policy.action_definition_digest)
    drift.push({ code: 'action_redefined', message: `action "${plan.action.type}" was redefined in the config since this plan was proposed; propose and review it again` })
  else if (plan.compensates && policy.written_set_digest !== undefined && writtenSetDigestOf(ctx.catalogue.get(row.resource).config, plan) !== policy.written_set_digest)
    drift.push({ code: 'action_redefined', message: writtenSetRedefined(plan) })
  const limits = runLimitsDriftOf(policy.run_limits, runLimitsOf(ctx.execution, ctx.catalogue.get(row.resource).config.connector), row.resource)
  if (limits) drift.push(limits)
  return drift
}

/** Why a compensation whose written-through action's `set` moved is not run: what it would write is not what was reviewed. */
function writtenSetRedefined(plan: Pick<PlanRecord, 'action'>): string {
  return `action "${String(plan.action.params.write_action)}", which this compensation writes through, was redefined in the config since this plan was proposed (what it sets: its \`set\`); the compensation would be written otherwise than it was reviewed, so put the definition the operation ran back to run it`
}

/**
 * Where the plan's resource writes now against where the plan was proposed: its environment label, and (plans proposed
 * since the digest was kept) where its connector points. The commit judged it; an operation's run judges it again, since
 * the process that runs a commit may be another, started later on another config (a restart resumes operations).
 *
 * @example placeDriftOf(catalogue, row).map((d) => d.code) // ['upstream_moved'] once base_url points elsewhere
 */
export function placeDriftOf(catalogue: PlanContext['catalogue'], row: Pick<PlanRow, 'resource' | 'environment' | 'policy'>): ConfigDrift[] {
  const drift: ConfigDrift[] = []
  const resource = catalogue.get(row.resource)
  if (resource.environment !== row.environment)
    drift.push({ code: 'environment_changed', message: `the resource's environment is now "${resource.environment}", not the "${row.environment}" this plan was proposed for` })
  // Plans proposed before the digest was kept have none: they are judged by the environment label alone, as then.
  const proposedAt = (JSON.parse(row.policy) as StoredPolicy).upstream_digest
  if (proposedAt !== undefined && !sameUpstream(resource.config, proposedAt))
    drift.push({
      code: 'upstream_moved',
      message: `the resource's connector points elsewhere than when this plan was proposed (${UPSTREAM_PARTS}), though its environment still reads "${resource.environment}"; what was reviewed was read there, so it is never written here`,
    })
  return drift
}

/**
 * The action a plan runs, as the config holds it now; 409 `conflict` naming the drift when the config moved under
 * the plan (see `configDriftOf`), the drift recorded first (`recordDriftSeen`).
 *
 * @example
 * const actionConfig = await assertConfigUnchanged(ctx, row, toRecord(row), policyNow(ctx.catalogue, row, count), now)
 */
export async function assertConfigUnchanged(ctx: Pick<PlanContext, 'catalogue' | 'execution' | 'db'>, row: PlanRow, plan: PlanRecord, policy: StoredPolicy, now: string): Promise<ActionConfig> {
  const drift = configDriftOf(ctx, row, plan, policy)
  await recordDriftSeen(ctx, row, drift, now)
  if (drift.length > 0) throw new WarrantError('conflict', drift.map((d) => d.message).join('; '), { plan_id: row.id, config_drift: drift.map((d) => d.code) })
  return actionConfigOf(ctx, plan)
}

/**
 * Marks a plan the config was seen to have moved under, at `now` (the store's): the approvals decided then or before no
 * longer count (`notCountedOf`), even once the config is put back. Drift is judged from the config a process runs on,
 * so putting it back made the plan whole again, and the approval given before counted again, though every surface had
 * said meanwhile that the plan could not run and the agent had been told to propose again. Written only when it moves
 * the mark: the first sighting, or one after an approval decided since the last mark (a view during drift writes once).
 * Answers the mark as it stands after.
 *
 * @example await recordDriftSeen(ctx, row, configDriftOf(ctx, row, plan, policy), now)
 */
export async function recordDriftSeen(ctx: Pick<PlanContext, 'db'>, row: Pick<PlanRow, 'id' | 'config_drifted_at'>, drift: readonly ConfigDrift[], now: string): Promise<string | null> {
  const marked = row.config_drifted_at
  if (drift.length === 0) return marked
  if (marked !== null) {
    const since = await ctx.db.selectFrom('approvals').select('id').where('plan_id', '=', row.id).where('decided_at', '>=', marked).limit(1).executeTakeFirst()
    if (!since) return marked
  }
  const codes = JSON.stringify(drift.map((d) => d.code))
  // the later mark wins where two instances see it at once: an approval before either is void by both
  await ctx.db
    .updateTable('plans')
    .set({ config_drifted_at: now, config_drift: codes })
    .where('id', '=', row.id)
    .where((eb) => eb.or([eb('config_drifted_at', 'is', null), eb('config_drifted_at', '<', now)]))
    .execute()
  return marked !== null && marked > now ? marked : now
}
