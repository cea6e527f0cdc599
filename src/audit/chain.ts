import { canonicalJson, sha256 } from '../contract/index.js'
import type { AuditEventRow } from '../store/index.js'

/** The `prev_hash` of the first row: there is nothing before it. */
export const AUDIT_GENESIS_HASH = `sha256:${'0'.repeat(64)}`

/** The first row's `seq`; every later row is the previous one's plus one. */
export const AUDIT_FIRST_SEQ = 1

/** A stored row without its own hash: exactly what the hash covers. */
export type UnhashedAuditRow = Omit<AuditEventRow, 'hash'>

/**
 * The hash of one row: `sha256` of the canonical JSON of every column but `hash`, with `summary` and
 * `details` as the JSON text stored (so an export can be re-verified byte for byte without the database).
 *
 * @example hashAuditRow({ seq: 1, level: 'run', at: '2025-01-31T12:00:00.000Z', ..., prev_hash: AUDIT_GENESIS_HASH })
 */
export function hashAuditRow(row: UnhashedAuditRow): string {
  return sha256(
    canonicalJson({
      seq: row.seq,
      level: row.level,
      at: row.at,
      principal: row.principal,
      surface: row.surface,
      action: row.action,
      summary: row.summary,
      selection_id: row.selection_id,
      plan_id: row.plan_id,
      operation_id: row.operation_id,
      target_id: row.target_id,
      details: row.details,
      prev_hash: row.prev_hash,
    }),
  )
}

/** Whether a stored row's hash matches its content. */
export function rowHashMatches(row: AuditEventRow): boolean {
  return hashAuditRow(row) === row.hash
}
