import type { Kysely } from 'kysely'
import { type Actor, WarrantError, canonicalJson, digestOf } from '../contract/index.js'
import { UPSTREAM_PARTS, sameUpstream } from '../resources/index.js'
import type { RemainderTarget, SelectionOrigin } from '../selections/selection-service.js'
import type { Database, PlanRow } from '../store/index.js'
import { canonicalActionOf } from './actions.js'
import type { StoredPolicy } from './approval-policy.js'
import { type PlanContext, loadRow, scoped } from './plan-context.js'
import type { PlanRecord } from './plan-service.js'
import { viewOf } from './plan-view.js'
import { followingPlans, remainderOrigin } from './follow-ups.js'
import { createPlan } from './proposals.js'
import { type RunLimits, runLimitsOf, sameRunLimits } from './run-limits.js'
import type { PlanProposal } from './schemas.js'

/**
 * "Propose the rest": a new plan of the halted operation's action, params and environment over exactly its targets
 * never sent, at the versions its selection froze. It is another plan (its own selection digest, plan digest and
 * approvals: the old approval never counts), reviewed and committed like any; a record changed since its freeze is
 * caught by the commit's and the executor's version checks, as on the first run, never written blind.
 */
export async function proposeRemainder(ctx: PlanContext, actor: Actor, operationId: string, source: PlanRecord, targets: readonly RemainderTarget[]): Promise<PlanProposal> {
  const resource = ctx.catalogue.get(source.resource)
  scoped(actor, resource.name, source.action.type)
  if (source.compensates)
    throw new WarrantError('conflict', `operation ${operationId} ran a compensation of operation ${source.compensates}; its remainder is not proposed (the compensation's values belong to that operation's ledger)`, { operation_id: operationId })
  if (targets.length === 0) throw new WarrantError('conflict', `operation ${operationId} has no pending target: there is nothing left to propose`, { operation_id: operationId })
  // The versions were frozen where the operation wrote; pointed elsewhere since, they would be checked against other records.
  if (resource.environment !== source.environment)
    throw new WarrantError('conflict', `the resource's environment is now "${resource.environment}", not the "${source.environment}" operation ${operationId} wrote to; its remainder belongs there, so none is proposed here`, { operation_id: operationId })
  const policy = JSON.parse((await loadRow(ctx, source.plan_id)).policy) as StoredPolicy
  if (policy.upstream_digest !== undefined && !sameUpstream(resource.config, policy.upstream_digest))
    throw new WarrantError(
      'conflict',
      `the connector of resource "${resource.name}" points elsewhere than where operation ${operationId} wrote (${UPSTREAM_PARTS}, since plan ${source.plan_id} was proposed); its remainder belongs there, so none is proposed here`,
      { reason: 'upstream_moved', resource: resource.name, operation_id: operationId, plan_id: source.plan_id, config_drift: ['upstream_moved'] },
    )
  if (!Object.hasOwn(resource.config.actions, source.action.type))
    throw new WarrantError('conflict', `action "${source.action.type}" is no longer configured on resource "${resource.name}"; there is no remainder to propose`, { action: source.action.type, operation_id: operationId })
  const { action, config } = canonicalActionOf(resource, source.action)
  const definition = digestOf(config)
  if (definition !== policy.action_definition_digest)
    throw new WarrantError(
      'conflict',
      `action "${action.type}" was redefined since plan ${source.plan_id} was proposed; the rest of operation ${operationId} would be written otherwise than the first part, so no remainder is proposed (select the records again and propose the action as it is defined now)`,
      { reason: 'action_redefined', action: action.type, operation_id: operationId },
    )
  const origin = remainderOrigin(operationId, source.plan_id)
  const limits = runLimitsOf(ctx.execution, resource.config.connector)
  const open = (db: Kysely<Database>) => openRemainder(db, origin, action, definition, limits)
  // The same request is the same object (a fast path: two at once are decided in createPlan, under the operation's lock).
  const existing = await open(ctx.db)
  if (existing) return { ...(await viewOf(ctx, existing)), created: false }
  const selection = await ctx.selections.createRemainder(actor, resource.name, origin, source.selection_id, targets)
  return createPlan(ctx, { actor, resource, selection, action, config, compensates: null, follows: { key: `remainder:${operationId}`, open } })
}

/**
 * The open (or committed) remainder plan of this operation: on a selection of this origin, of this action as defined
 * now and bound to the stop rules and pacing configured now. A committed one is always the answer: the rest of an
 * operation is proposed once, and its own halt has its own remainder.
 */
async function openRemainder(db: Kysely<Database>, origin: Extract<SelectionOrigin, { kind: 'remainder' }>, action: PlanRecord['action'], definition: string, limits: RunLimits): Promise<PlanRow | undefined> {
  const rows = await followingPlans(db, origin).where('plans.action', '=', canonicalJson(action)).execute()
  return rows.find((r) => {
    if (r.state === 'committed') return true
    const policy = JSON.parse(r.policy) as StoredPolicy
    return policy.action_definition_digest === definition && sameRunLimits(policy.run_limits, limits)
  })
}
