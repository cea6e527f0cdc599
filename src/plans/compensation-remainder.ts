import { WarrantError } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import type { Resource } from '../resources/index.js'
import type { RemainderTarget } from '../selections/selection-service.js'
import { compensationConfig } from './compensation.js'
import type { CanonicalAction } from './plan-context.js'
import type { PlanRecord } from './plan-service.js'

type PerTarget = Record<string, Record<string, unknown>>

/**
 * The rest of a halted compensation run: a compensation of the same original operation (the same `write_action`,
 * `fields` and every other param) whose `restore` and `expect` hold the pending targets' entries alone, copied from the
 * halted plan's params (the before-values its ledger recorded, never read again; the targets are read for the preview alone). Its config is the compensation's
 * as the config defines it now, which the caller compares with the definition the halted plan was proposed with.
 * 409 when the action written through is no longer configured, or a pending target has no entry (never expected: the
 * halted plan's selection was frozen from those params).
 */
export function restOfCompensation(resource: Resource, operationId: string, source: PlanRecord, targets: readonly RemainderTarget[]): { action: CanonicalAction; config: ActionConfig } {
  const params = source.action.params as { write_action?: unknown; restore?: PerTarget; expect?: PerTarget } & Record<string, unknown>
  const writeAction = typeof params.write_action === 'string' ? params.write_action : ''
  if (!Object.hasOwn(resource.config.actions, writeAction))
    throw new WarrantError(
      'conflict',
      `action "${writeAction}", which compensation operation ${operationId} writes through, is no longer configured on resource "${resource.name}"; there is no remainder to propose`,
      { action: writeAction, operation_id: operationId },
    )
  const restore: PerTarget = {}
  const expect: PerTarget = {}
  for (const t of targets) {
    const before = params.restore?.[t.id]
    const wrote = params.expect?.[t.id]
    if (!before || !wrote)
      throw new WarrantError('conflict', `target "${t.id}" has no recorded before-value in compensation plan ${source.plan_id}; it cannot be restored, so no remainder is proposed`, { id: t.id, plan_id: source.plan_id })
    restore[t.id] = before
    expect[t.id] = wrote
  }
  const action: CanonicalAction = { type: source.action.type, params: { ...params, restore, expect } }
  return { action, config: compensationConfig(resource.config, { action }) }
}
