import type { Kysely } from 'kysely'
import { type Actor, WarrantError, canonicalJson, digestOf } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import { type Resource, UPSTREAM_PARTS, sameUpstream } from '../resources/index.js'
import type { RemainderTarget, SelectionOrigin } from '../selections/selection-service.js'
import type { Database, PlanRow } from '../store/index.js'
import { canonicalActionOf } from './actions.js'
import type { StoredPolicy } from './approval-policy.js'
import { COMPENSATE, planInActionScope, writtenSetDigestOf } from './compensation.js'
import { restOfCompensation } from './compensation-remainder.js'
import { type CanonicalAction, type PlanContext, loadRow, scoped } from './plan-context.js'
import type { CurrentReader, PlanRecord } from './plan-service.js'
import { viewOf } from './plan-view.js'
import { followingPlans, remainderOrigin } from './follow-ups.js'
import { createPlan } from './proposals.js'
import { type RunLimits, runLimitsOf, sameRunLimits } from './run-limits.js'
import type { PlanProposal } from './schemas.js'

/**
 * "Propose the rest": a new plan of the halted operation's action, params and environment over exactly its targets
 * never sent, at the versions its selection froze. It is another plan (its own selection digest, plan digest and
 * approvals: the old approval never counts), reviewed and committed like any; a record changed since its freeze is
 * caught by the commit's and the executor's version checks, as on the first run, never written blind. The rest of a
 * halted compensation is a compensation of the same original operation (`compensates`, so the same scope rules) over
 * its pending targets, their before-values copied from the halted plan (see `restOfCompensation`), refused when the
 * action it writes through was redefined since (its write or expected statuses: the compensation's definition; its `set`).
 */
export async function proposeRemainder(
  ctx: PlanContext,
  actor: Actor,
  operationId: string,
  source: PlanRecord,
  targets: readonly RemainderTarget[],
  readCurrent?: CurrentReader,
): Promise<PlanProposal> {
  const resource = ctx.catalogue.get(source.resource)
  // a compensation's rest is governed as the compensation is: by the action it undoes, or by `compensate` itself
  if (!planInActionScope(actor, source)) scoped(actor, resource.name, source.compensates ? COMPENSATE : source.action.type)
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
  // The rest of a compensation is a compensation of the same original operation over the pending targets alone.
  const { action, config } = source.compensates ? restOfCompensation(resource, operationId, source, targets) : restOfAction(resource, operationId, source)
  const definition = digestOf(config)
  // a compensation's write maps its restored values through the `set` of the action written through: moved, it is redefined
  const setMoved = source.compensates && policy.written_set_digest !== undefined && writtenSetDigestOf(resource.config, { action }) !== policy.written_set_digest
  if (definition !== policy.action_definition_digest || setMoved) {
    const written = source.compensates ? String(action.params.write_action) : action.type
    const through = source.compensates ? `, which compensation operation ${operationId} writes through,` : ''
    throw new WarrantError(
      'conflict',
      `action "${written}"${through} was redefined since plan ${source.plan_id} was proposed; the rest of operation ${operationId} would be written otherwise than the first part, so no remainder is proposed (${source.compensates ? 'put the definition it ran back to finish the compensation' : 'select the records again and propose the action as it is defined now'})`,
      { reason: 'action_redefined', action: written, operation_id: operationId },
    )
  }
  const origin = remainderOrigin(operationId, source.plan_id)
  const limits = runLimitsOf(ctx.execution, resource.config.connector)
  const open = (db: Kysely<Database>) => openRemainder(db, origin, action, definition, limits)
  // The same request is the same object (a fast path: two at once are decided in createPlan, under the operation's lock).
  const existing = await open(ctx.db)
  if (existing) return { ...(await viewOf(ctx, existing)), created: false }
  // the rest of a compensation is previewed as the compensation was: each target read for whether it still holds what
  // the operation wrote (its `expect`), read only once nothing above refused it
  const wrote = action.params.expect as Record<string, Record<string, unknown>> | undefined
  const current = source.compensates && readCurrent ? await readCurrent(targets.map((t) => ({ id: t.id, source: t.source, after: wrote?.[t.id] ?? {} }))) : undefined
  const selection = await ctx.selections.createRemainder(actor, resource.name, origin, source.selection_id, targets)
  return createPlan(ctx, {
    actor,
    resource,
    selection,
    action,
    config,
    compensates: source.compensates ?? null,
    follows: { key: `remainder:${operationId}`, open },
    ...(current ? { current } : {}),
  })
}

/** The rest of an operation of a configured action: the same action and params, as the config defines it now. */
function restOfAction(resource: Resource, operationId: string, source: PlanRecord): { action: CanonicalAction; config: ActionConfig } {
  if (!Object.hasOwn(resource.config.actions, source.action.type))
    throw new WarrantError('conflict', `action "${source.action.type}" is no longer configured on resource "${resource.name}"; there is no remainder to propose`, { action: source.action.type, operation_id: operationId })
  return canonicalActionOf(resource, source.action)
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
