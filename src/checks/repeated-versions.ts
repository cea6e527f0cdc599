import type { ResourceConfig } from '../config/index.js'
import type { SourceRecord } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'

/**
 * Records a judgement needs: with fewer, a handful of records sharing a few values says nothing. The probe reads
 * 150 by default (3 pages of 50).
 */
const FEWEST_RECORDS = 20

/**
 * The most records per distinct value a per-write version may show. A real one (a UUID, an etag, a revision token)
 * is its record's own: two records share one only by coincidence, so distinct values ≈ records. A business field
 * holds a few values over many records (3 plans over 150 records: 50 each). Ten per value leaves nine records in
 * ten sharing values before it trips, far past any per-write version; what still trips it is a column where most
 * rows still hold one default value, never moved by a write, which is no version either.
 */
const RECORDS_PER_VALUE = 10

/**
 * Text that holds only whole numbers or ISO dates is a counter or a timestamp kept as text: such versions
 * legitimately start equal (every row at "1", a bulk load at one instant), as integer and timestamp versions do.
 */
const COUNTER_OR_TIME = /^(\d+|\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}(:?\d{2})?)?)?)$/

/**
 * A `string` version field whose values repeat across the records read: a business field (a plan, a state) named
 * as the version. A sql write sets it to a fresh UUID (version.ts `nextVersion`), overwriting the business value
 * unapproved (the effect check exempts the version); another writer's change never moves it, so a stale write is
 * not told apart. `unsafe` where an action can write, `fails_closed` where the version column already refuses
 * every write (`versionRefused`: too short for the UUID, say), a `warning` where no action is declared yet; null
 * when the field is not a string, too few records were read, or its values are its records' own.
 */
export function repeatedVersions(config: ResourceConfig, records: readonly SourceRecord[], versionRefused: boolean): Pick<Guarantee, 'status' | 'detail' | 'config_keys'> | null {
  const connector = config.connector
  const field = connector.kind === 'http' ? (connector.version.from === 'field' ? connector.version.field : null) : (config.version_field ?? null)
  if (field === null || config.fields[field] !== 'string' || records.length < FEWEST_RECORDS) return null
  const values = records.map((r) => r.version)
  if (values.every((v) => COUNTER_OR_TIME.test(v))) return null
  const distinct = new Set(values).size
  if (distinct * RECORDS_PER_VALUE > records.length) return null
  const writes = Object.keys(config.actions).length > 0
  const overwrite = connector.kind === 'sql' ? `every write would set "${field}" to a fresh UUID, overwriting its value, and ` : ''
  return {
    status: !writes ? 'warning' : versionRefused ? 'fails_closed' : 'unsafe',
    detail:
      `version field "${field}" holds ${distinct} distinct values over the ${records.length} records read: values that repeat across records are what a business field holds, not a version each write moves; ` +
      `${overwrite}a change by another writer would not move it, so a stale write would not be told apart` +
      `${!writes ? ' (no action is declared yet)' : versionRefused ? ' (its column refuses every write already: see conditional_writes)' : ''}; name as the version a column that means nothing else and changes on every write: a counter, updated_at`,
    config_keys: [connector.kind === 'http' ? 'connector.version.field' : 'version_field'],
  }
}
