import { clausesOf } from '../contract/index.js'
import type { ResourceConfig } from '../config/index.js'

/**
 * What a member keeps besides the fields the selection shows: whatever a plan on it needs to show before →
 * after and to judge its policy (fields the actions set or test, group-by fields, the standing approvals'
 * selectors and flags). Never a denied field.
 */
export function storedFieldsOf(config: ResourceConfig, fields: readonly string[]): string[] {
  const out = new Set<string>([config.id_field, ...fields, ...config.group_by])
  for (const action of Object.values(config.actions)) {
    for (const f of Object.keys(action.set)) out.add(f)
    for (const c of clausesOf(action.precondition)) out.add(c.field)
    for (const f of Object.keys(action.expect.fields ?? {})) out.add(f)
  }
  for (const standing of config.standing_approvals) {
    for (const c of clausesOf(standing.selector)) out.add(c.field)
    if (standing.flagged) for (const c of clausesOf(standing.flagged)) out.add(c.field)
  }
  const denied = new Set(config.denied_fields)
  return [...out].filter((f) => !denied.has(f) && f in config.fields)
}
