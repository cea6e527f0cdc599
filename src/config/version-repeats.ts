import type { ResourceConfig } from './schema.js'

/**
 * Whether a `string` version field repeats its values across records as a business field (a plan, a state) does: the
 * rule `warrant check` judges the records it reads by (checks/repeated-versions.ts) and a proposal judges a frozen
 * selection's versions by (plans/version-repeats.ts), so both refuse the same columns. Pure: the callers count.
 */

/**
 * Records a judgement needs: with fewer, a handful of records sharing a few values says nothing. The probe reads
 * 150 by default (3 pages of 50).
 */
export const FEWEST_VERSIONED_RECORDS = 20

/**
 * The most records per distinct value a per-write version may show. A real one (a UUID, an etag, a revision token)
 * is its record's own: two records share one only by coincidence, so distinct values ≈ records. A business field
 * holds a few values over many records (3 plans over 150 records: 50 each). Ten per value leaves nine records in
 * ten sharing values before it trips, far past any per-write version; what still trips it is a column where most
 * rows still hold one default value, never moved by a write, which is no version either.
 */
export const RECORDS_PER_VERSION = 10

/**
 * Text that holds only whole numbers or ISO dates is a counter or a timestamp kept as text: such versions
 * legitimately start equal (every row at "1", a bulk load at one instant), as integer and timestamp versions do.
 * Written with [0-9] alone, so the same source means the same in JavaScript, PostgreSQL (`~`) and SQLite (`regexp`).
 */
export const COUNTER_OR_TIME_SOURCE = '^([0-9]+|[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?)$'
export const COUNTER_OR_TIME = new RegExp(COUNTER_OR_TIME_SOURCE)

/** The field a resource's versions are read from when it is declared `string`, and the config key naming it; null otherwise. */
export function stringVersionField(config: ResourceConfig): { readonly field: string; readonly configKey: string } | null {
  const connector = config.connector
  const field = connector.kind === 'http' ? (connector.version.from === 'field' ? connector.version.field : null) : (config.version_field ?? null)
  if (field === null || config.fields[field] !== 'string') return null
  return { field, configKey: connector.kind === 'http' ? 'connector.version.field' : 'version_field' }
}

/**
 * Whether `distinct` values over `records` versioned records repeat as a business field's do (enough records to judge,
 * at least RECORDS_PER_VERSION records per value). Whether they are all counters or times (exempt) is the caller's to ask.
 */
export function versionsRepeat(records: number, distinct: number): boolean {
  return records >= FEWEST_VERSIONED_RECORDS && distinct * RECORDS_PER_VERSION <= records
}

/** The most distinct values `records` versioned records may hold and still repeat (`versionsRepeat`): a count may stop one past it. */
export function mostRepeatingDistinct(records: number): number {
  return Math.floor(records / RECORDS_PER_VERSION)
}

/** What a write does to a repeated version besides missing other writers' changes: a sql write overwrites it. */
export function versionOverwrite(config: ResourceConfig, field: string): string {
  return config.connector.kind === 'sql' ? `every write would set "${field}" to a fresh UUID, overwriting its value, and ` : ''
}
