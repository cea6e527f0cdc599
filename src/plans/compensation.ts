import { type Actor, type Filter, WarrantError, digestOf, inScope } from '../contract/index.js'
import { type ActionConfig, type ResourceConfig, notRestorableText, restorabilityOf } from '../config/index.js'
import type { PlanContext } from './plan-context.js'
import type { PlanRecord, RenderedWrite } from './plan-service.js'
import { exemptPaths, renderHttpWrite } from './http-write.js'
import type { TemplateContext } from './render.js'

/** The action type of compensation plans. */
export const COMPENSATE = 'compensate'

/**
 * Whether the actor's action scope lets it propose or commit this plan. A compensation is governed by the action
 * it undoes (whoever may pause collection may restore what a pause changed) or by `compensate` itself; every
 * other plan by its own action. One rule for proposing, committing and replaying a commit, so a token cannot
 * propose what it may never commit, nor commit what it could not propose.
 *
 * @example planInActionScope(actor, plan) // false: the agent's scope holds neither the action nor 'compensate'
 */
export function planInActionScope(actor: Actor, plan: Pick<PlanRecord, 'resource' | 'action' | 'compensates'>): boolean {
  if (inScope(actor, plan.resource, plan.action.type)) return true
  if (!plan.compensates) return false
  const original = plan.action.params.compensates_action
  return typeof original === 'string' && inScope(actor, plan.resource, original)
}

/**
 * Refuses a compensation its action's write cannot restore (`restorabilityOf`): declared irreversible, a `DELETE`
 * (it would delete again) or an action endpoint whose body carries no set field (it would send the same change
 * again without the before-values). A 409 whose `details.reason` names which, before any selection or plan exists.
 */
export function assertRestorable(actionType: string, config: Pick<ActionConfig, 'reversible' | 'write'>): void {
  const judged = restorabilityOf(config.reversible, config.write)
  const text = notRestorableText(actionType, judged)
  if (judged.kind !== 'refused' || text === null) return
  if (judged.reason === 'declared_irreversible') throw new WarrantError('conflict', text, { reason: judged.reason, action: actionType })
  throw new WarrantError('conflict', `${text}; no compensation is proposed, and its before-values stay in the operation's results to restore by other means`, {
    reason: judged.reason,
    action: actionType,
    write: judged.request,
  })
}

/**
 * Compensation is synthesized rather than configured: its "action" is derived from the original action's write,
 * so that undoing needs no extra config and stays bound to what the operation actually did.
 */
export function compensationConfig(config: ResourceConfig, plan: Pick<PlanRecord, 'action'>): ActionConfig {
  const params = plan.action.params as { operation_id?: string; write_action?: string; fields?: string[]; unknown_not_restored?: number }
  const original = params.write_action && Object.hasOwn(config.actions, params.write_action) ? config.actions[params.write_action] : undefined
  const fields = params.fields ?? []
  const unknown = params.unknown_not_restored ?? 0
  const left =
    unknown > 0
      ? `; ${unknown} target${unknown === 1 ? '' : 's'} of the operation ended unknown (the write may have landed) and ${unknown === 1 ? 'is' : 'are'} not restored: reconcile operation ${params.operation_id}, then propose the compensation again`
      : ''
  const judged = original ? restorabilityOf(original.reversible, original.write) : null
  // an endpoint that does the change itself restores only if it sets what its body says: the plan says so
  const condition = judged?.kind === 'if_endpoint_sets' ? `; restored only if ${judged.request} sets what its body says (each record is checked after the write: one left otherwise is never counted restored)` : ''
  return {
    description: `restore what operation ${params.operation_id} changed (${fields.join(', ')}) to each record's before-value, only where the record still holds what the operation wrote${condition}${left}`,
    params: {},
    set: Object.fromEntries(fields.map((f) => [f, `(per target: its before-value of ${f})`])),
    precondition: {},
    ...(original?.write ? { write: original.write } : {}),
    expect: { status: original?.expect.status ?? [200, 201, 204] },
    reversible: true,
  }
}

/**
 * `digestOf` the `set` of the action a compensation writes through, as the config defines it now (that of an action no
 * longer configured: null's). Its templates map each restored value into that action's write (`renderCompensation`),
 * and its field names are what is restored, yet the compensation's own definition (`compensationConfig`) binds only the
 * write and statuses: a compensation keeps this digest from its proposal and is refused once it moves.
 */
export function writtenSetDigestOf(config: ResourceConfig, plan: Pick<PlanRecord, 'action'>): string {
  const name = plan.action.params.write_action
  return digestOf(typeof name === 'string' && Object.hasOwn(config.actions, name) ? config.actions[name]!.set : null)
}

export function renderCompensation(
  ctx: Pick<PlanContext, 'catalogue'>,
  plan: PlanRecord,
  actionConfig: ActionConfig,
  target: { readonly id: string; readonly version: string | null },
): RenderedWrite {
  const params = plan.action.params as { restore?: Record<string, Record<string, unknown>>; expect?: Record<string, Record<string, unknown>>; write_action?: string }
  const restore = params.restore?.[target.id]
  const wrote = params.expect?.[target.id]
  if (!restore || !wrote) throw new WarrantError('invalid_request', `"${target.id}" is not a target of compensation plan ${plan.plan_id}`, { id: target.id })
  const precondition: Record<string, Filter[string]> = {}
  for (const [field, value] of Object.entries(wrote)) {
    if (value === null) precondition[field] = { is_null: true }
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') precondition[field] = value
    // a list or an object cannot be compared by a filter; the frozen version still guards the target
  }
  const resource = ctx.catalogue.get(plan.resource)
  const original = params.write_action && Object.hasOwn(resource.config.actions, params.write_action) ? resource.config.actions[params.write_action] : undefined
  // Templates written against the original action's params get the values being restored.
  const inverse: Record<string, unknown> = {}
  for (const [field, template] of Object.entries(original?.set ?? {})) {
    const m = typeof template === 'string' ? /^\{\{\s*params\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(template) : null
    if (m && Object.hasOwn(restore, field)) inverse[m[1]!] = restore[field]
  }
  const rendering: TemplateContext = { id: target.id, version: target.version, params: inverse, set: restore }
  const write = actionConfig.write
  return {
    set: { ...restore },
    ...(write ? { http: renderHttpWrite(write, rendering) } : {}),
    exempt: exemptPaths(resource.config, write, restore),
    expect: { status: actionConfig.expect.status, fields: { ...restore } },
    precondition: precondition as Filter,
    holds: { ...wrote },
    restores: { ...restore },
  }
}

/** Compensation plans show how many targets they restore, not every target's values. */
export function displayParams(plan: PlanRecord): Record<string, unknown> {
  if (!plan.compensates) return { ...plan.action.params }
  const { restore, expect: _expect, ...rest } = plan.action.params as { restore?: Record<string, unknown>; expect?: unknown } & Record<string, unknown>
  return { ...rest, targets: Object.keys(restore ?? {}).length, targets_digest: digestOf({ restore, expect: _expect }) }
}
