import { canonicalJson, sha256 } from '../contract/index.js'
import type { AuditEventRow } from '../store/index.js'

/** The `prev_hash` of the first row: there is nothing before it. */
export const AUDIT_GENESIS_HASH = `sha256:${'0'.repeat(64)}`

/** The first row's `seq`; every later row is the previous one's plus one. */
export const AUDIT_FIRST_SEQ = 1

/** A stored row without its own hash: exactly what the hash covers. */
export type UnhashedAuditRow = Omit<AuditEventRow, 'hash'>

// One list for the hash and the export, so a row exported can always be re-hashed to the same value.
const HASHED_COLUMNS = [
  'seq',
  'level',
  'at',
  'principal',
  'surface',
  'action',
  'summary',
  'selection_id',
  'plan_id',
  'operation_id',
  'target_id',
  'details',
  'prev_hash',
] as const satisfies readonly (keyof UnhashedAuditRow)[]

/** Every column of `audit_events`, in table order. */
const AUDIT_COLUMNS = [...HASHED_COLUMNS, 'hash'] as const

// Fails to compile when the table gains a column the lists do not name, which would otherwise go unhashed
// and unexported without a word.
type Unlisted = Exclude<keyof AuditEventRow, (typeof AUDIT_COLUMNS)[number]>
const everyColumnListed: [Unlisted] extends [never] ? true : Unlisted = true
void everyColumnListed

function pickColumns<K extends keyof AuditEventRow>(row: Pick<AuditEventRow, K>, columns: readonly K[]): Pick<AuditEventRow, K> {
  const picked = {} as Pick<AuditEventRow, K>
  for (const column of columns) picked[column] = row[column]
  return picked
}

/**
 * The hash of one row: `sha256` of the canonical JSON of every column but `hash`, with `summary` and
 * `details` as the JSON text stored (so an export can be re-verified byte for byte without the database).
 *
 * @example hashAuditRow({ seq: 1, level: 'run', at: '2025-01-31T12:00:00.000Z', ..., prev_hash: AUDIT_GENESIS_HASH })
 */
export function hashAuditRow(row: UnhashedAuditRow): string {
  return sha256(canonicalJson(pickColumns(row, HASHED_COLUMNS)))
}

/** Whether a stored row's hash matches its content. */
export function rowHashMatches(row: AuditEventRow): boolean {
  return hashAuditRow(row) === row.hash
}

/**
 * A row as stored, columns in table order and nothing else (a driver may return more): what the export
 * writes, and what the hash covers plus the hash.
 */
export function storedRow(row: AuditEventRow): AuditEventRow {
  return pickColumns(row, AUDIT_COLUMNS)
}
