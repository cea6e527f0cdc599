import { WarrantError } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import type { Resource } from '../resources/index.js'
import { parseRequest } from '../selections/parse-request.js'
import { COMPENSATE, compensationConfig, renderCompensation } from './compensation.js'
import type { CanonicalAction, PlanContext } from './plan-context.js'
import type { ActionRequest, PlanRecord, RenderedWrite } from './plan-service.js'
import { exemptPaths, renderHttpWrite } from './http-write.js'
import { renderValue, type TemplateContext } from './render.js'
import { actionRequestSchema } from './schemas.js'

// Params may be given nested or beside `type`; both forms must yield the same action, hence the merge.
function normaliseAction(input: unknown): ActionRequest & { readonly params: Readonly<Record<string, string | number | boolean>> } {
  const parsed = parseRequest(actionRequestSchema, input, 'action')
  const { type, params = {}, ...flat } = parsed as { type: string; params?: Record<string, string | number | boolean> } & Record<string, string | number | boolean>
  const merged: Record<string, string | number | boolean> = { ...params }
  for (const [k, v] of Object.entries(flat)) {
    if (Object.hasOwn(merged, k) && merged[k] !== v)
      throw new WarrantError('invalid_request', `action parameter "${k}" is given twice with different values (in params and beside type)`, { param: k })
    merged[k] = v
  }
  return { type, params: merged }
}

/** The validated, canonical `{type, params}` of a configured action (params sorted, so equal actions digest equally). */
export function canonicalActionOf(resource: Resource, input: unknown): { action: CanonicalAction; config: ActionConfig } {
  const { type, params } = normaliseAction(input)
  const actions = resource.config.actions
  const known = Object.keys(actions)
  const config = Object.hasOwn(actions, type) ? actions[type] : undefined
  if (!config) {
    if (type === COMPENSATE)
      throw new WarrantError('invalid_request', 'a compensation plan is proposed from an operation (POST /v1/operations/{id}/compensation), not on a selection', { action: type })
    throw new WarrantError('invalid_request', `unknown action "${type}" for resource "${resource.name}"; known actions: ${known.join(', ') || '(none)'}`, { action: type, known })
  }
  const missing: string[] = []
  const unexpected: string[] = []
  const wrongType: { param: string; expected: string }[] = []
  for (const [name, spec] of Object.entries(config.params)) {
    if (!Object.hasOwn(params, name)) {
      if (spec.required) missing.push(name)
      continue
    }
    if (typeof params[name] !== spec.type) wrongType.push({ param: name, expected: spec.type })
  }
  for (const name of Object.keys(params)) if (!Object.hasOwn(config.params, name)) unexpected.push(name)
  if (missing.length + unexpected.length + wrongType.length > 0) {
    const parts = [
      missing.length ? `missing parameter(s): ${missing.join(', ')}` : '',
      unexpected.length ? `unknown parameter(s): ${unexpected.join(', ')} (declared: ${Object.keys(config.params).join(', ') || 'none'})` : '',
      wrongType.length ? `wrongly typed: ${wrongType.map((w) => `${w.param} (expected ${w.expected})`).join(', ')}` : '',
    ].filter(Boolean)
    throw new WarrantError('invalid_request', `action "${type}": ${parts.join('; ')}`, { action: type, missing, unexpected, wrong_type: wrongType })
  }
  const sorted = Object.fromEntries(Object.keys(params).sort().map((k) => [k, params[k]]))
  return { action: { type, params: sorted }, config }
}

/** The action config a plan executes. */
export function actionConfigOf(ctx: Pick<PlanContext, 'catalogue'>, plan: Pick<PlanRecord, 'resource' | 'compensates' | 'action'>): ActionConfig {
  const resource = ctx.catalogue.get(plan.resource)
  if (plan.compensates) return compensationConfig(resource.config, plan)
  const config = Object.hasOwn(resource.config.actions, plan.action.type) ? resource.config.actions[plan.action.type] : undefined
  if (!config)
    throw new WarrantError('conflict', `action "${plan.action.type}" is no longer configured on "${plan.resource}"; the plan cannot run`, { action: plan.action.type })
  return config
}

export function renderWrite(
  ctx: Pick<PlanContext, 'catalogue'>,
  plan: PlanRecord,
  actionConfig: ActionConfig,
  target: { readonly id: string; readonly version: string | null },
): RenderedWrite {
  if (plan.compensates) return renderCompensation(ctx, plan, actionConfig, target)
  const base: TemplateContext = { id: target.id, version: target.version, params: plan.action.params }
  const set = renderValue(actionConfig.set, base) as Record<string, unknown>
  const withSet: TemplateContext = { ...base, set }
  const write = actionConfig.write
  return {
    set,
    ...(write ? { http: renderHttpWrite(write, withSet) } : {}),
    exempt: exemptPaths(ctx.catalogue.get(plan.resource).config, write, set),
    expect: { status: actionConfig.expect.status, fields: actionConfig.expect.fields ? (renderValue(actionConfig.expect.fields, withSet) as Record<string, unknown>) : { ...set } },
    precondition: actionConfig.precondition,
  }
}
