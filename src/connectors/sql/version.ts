import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { FieldType } from '../../config/index.js'
import { quotedKey } from '../../contract/index.js'
import type { SqlDialectName } from './url.js'

/** How the version column is compared and advanced, by its declared type. */
export interface VersionColumn {
  readonly versionField: string
  readonly versionType: FieldType
  readonly dialect: SqlDialectName
}

/**
 * An expected version as a statement parameter; undefined when no row could be at it. An integer past 2^53 goes
 * as a bigint (a number would round it: every write to such a row was answered "at version X, not the expected
 * version X"), below the 64-bit integer whose next version (version + 1) would not fit: SQLite made it a float.
 */
export function versionParam(column: VersionColumn, version: string): string | number | bigint | undefined {
  if (column.versionType === 'integer') {
    if (!/^-?\d+$/.test(version)) return undefined
    if (Number.isSafeInteger(Number(version))) return Number(version)
    const big = BigInt(version)
    return big >= -(2n ** 63n) && big < LAST_INTEGER_VERSION ? big : undefined
  }
  if (column.versionType === 'timestamp') return Number.isNaN(Date.parse(version)) ? undefined : version
  return version
}

/** 2^63 - 1: past it no integer version is a 64-bit integer, and at it `version + 1` is none. */
const LAST_INTEGER_VERSION = 2n ** 63n - 1n

/** `zoneless`: the column is a PostgreSQL `timestamp` without time zone (`ColumnType.zoneless`). */
export function versionCondition(column: VersionColumn, expected: string | number | bigint, zoneless = false) {
  const ref = sql.ref(column.versionField)
  if (column.versionType === 'timestamp' && column.dialect === 'postgres' && zoneless) {
    // shown as the UTC time it holds (`utcWallClock`); cast to timestamptz it would be read in the session's zone,
    // and under America/New_York no write would ever match the version a record shows
    return sql`date_trunc('milliseconds', ${ref}) = date_trunc('milliseconds', cast(${expected} as timestamptz) at time zone 'UTC')`
  }
  if (column.versionType === 'timestamp' && column.dialect === 'postgres') {
    // a timestamptz column keeps microseconds; what we handed out was read at millisecond precision
    return sql`date_trunc('milliseconds', cast(${ref} as timestamptz)) = date_trunc('milliseconds', cast(${expected} as timestamptz))`
  }
  if (column.versionType === 'integer' && column.dialect === 'postgres') return sql`${ref} = cast(${expected} as bigint)`
  if (column.versionType === 'timestamp' && column.dialect === 'mysql') {
    // a DATETIME(6) keeps microseconds; the version handed out has milliseconds: the same millisecond matches
    const from = new Date(Date.parse(String(expected)))
    return sql`(${ref} >= ${from} and ${ref} < ${new Date(from.getTime() + 1)})`
  }
  return sql`${ref} = ${expected}`
}

/** The version a write sets: it must differ from `expected` even when the clock has not moved past it. */
export function nextVersion(column: VersionColumn, expected: string, now: Date): unknown {
  if (column.versionType === 'integer') return sql`${sql.ref(column.versionField)} + 1`
  if (column.versionType === 'timestamp') {
    const previous = Date.parse(expected)
    const next = new Date(Math.max(now.getTime(), previous + 1))
    // mysql2 writes a Date as a DATETIME literal in UTC; MySQL would refuse the ISO string's trailing Z
    return column.dialect === 'mysql' ? next : next.toISOString()
  }
  return randomUUID()
}

/** Timestamps compare as instants: the stored text may be formatted differently from the one handed out. */
export function sameVersion(column: VersionColumn, stored: string, expected: string): boolean {
  if (stored === expected) return true
  if (column.versionType !== 'timestamp') return false
  const a = Date.parse(stored)
  const b = Date.parse(expected)
  return !Number.isNaN(a) && a === b
}

/** Whether a record read from a row holds no version: its version column NULL (read as "") or "". */
export function hasNoVersion(record: { readonly version: string }): boolean {
  return record.version === ''
}

/** Why a row without a version cannot be read as a record nor written, and the fix. */
export function noVersionMessage(column: Pick<VersionColumn, 'versionField'>, id: string): string {
  return `record ${quotedKey(id)} has no version: its version column "${column.versionField}" is NULL or empty, so no change can be made conditional on it (give the row a version, or leave such rows out with a filter)`
}
