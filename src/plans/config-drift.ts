import { WarrantError, digestOf } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import type { PlanRow } from '../store/index.js'
import { actionConfigOf } from './actions.js'
import type { StoredPolicy } from './approval-policy.js'
import type { PlanContext } from './plan-context.js'
import type { PlanRecord } from './plan-service.js'

/**
 * The action a plan runs, as the config holds it now; a `conflict` when the config moved under the plan since it
 * was proposed: the resource writes to another environment, or the action was removed or redefined. A commit
 * refuses such a plan, so an approval of it is refused too: it would tell the reviewer and the agent that a
 * plan is approved and may be committed when no commit can run it.
 *
 * @example
 * const actionConfig = assertConfigUnchanged(ctx, row, toRecord(row), policyNow(ctx.catalogue, row, count))
 */
export function assertConfigUnchanged(ctx: Pick<PlanContext, 'catalogue'>, row: PlanRow, plan: PlanRecord, policy: StoredPolicy): ActionConfig {
  const resource = ctx.catalogue.get(row.resource)
  if (resource.environment !== row.environment)
    throw new WarrantError('conflict', `the resource's environment is now "${resource.environment}", not the "${row.environment}" this plan was proposed for`, {
      plan_id: row.id,
      environment: resource.environment,
      plan_environment: row.environment,
    })
  const actionConfig = actionConfigOf(ctx, plan)
  if (digestOf(actionConfig) !== policy.action_definition_digest)
    throw new WarrantError('conflict', `action "${plan.action.type}" was redefined in the config since this plan was proposed; propose and review it again`, { plan_id: row.id })
  return actionConfig
}
