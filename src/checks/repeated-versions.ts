import { type ResourceConfig, COUNTER_OR_TIME, stringVersionField, versionOverwrite, versionsRepeat } from '../config/index.js'
import type { SourceRecord } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'

/**
 * A `string` version field whose values repeat across the records read: a business field (a plan, a state) named
 * as the version (the rule: config/version-repeats.ts, which a proposal judges a selection's versions by too). A sql
 * write sets it to a fresh UUID (version.ts `nextVersion`), overwriting the business value unapproved (the effect
 * check exempts the version); another writer's change never moves it, so a stale write is not told apart. `unsafe`
 * where an action can write, `fails_closed` where the version column already refuses every write (`versionRefused`:
 * too short for the UUID, say), a `warning` where no action is declared yet; null when the field is not a string, too
 * few records were read, or its values are its records' own.
 */
export function repeatedVersions(config: ResourceConfig, records: readonly SourceRecord[], versionRefused: boolean): Pick<Guarantee, 'status' | 'detail' | 'config_keys'> | null {
  const version = stringVersionField(config)
  if (version === null) return null
  const values = records.map((r) => r.version)
  const distinct = new Set(values).size
  if (!versionsRepeat(records.length, distinct) || values.every((v) => COUNTER_OR_TIME.test(v))) return null
  const { field, configKey } = version
  const writes = Object.keys(config.actions).length > 0
  return {
    status: !writes ? 'warning' : versionRefused ? 'fails_closed' : 'unsafe',
    detail:
      `version field "${field}" holds ${distinct} distinct values over the ${records.length} records read: values that repeat across records are what a business field holds, not a version each write moves; ` +
      `${versionOverwrite(config, field)}a change by another writer would not move it, so a stale write would not be told apart` +
      `${!writes ? ' (no action is declared yet)' : versionRefused ? ' (its column refuses every write already: see conditional_writes)' : ''}; name as the version a column that means nothing else and changes on every write: a counter, updated_at`,
    config_keys: [configKey],
  }
}
