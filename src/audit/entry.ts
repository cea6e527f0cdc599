import type { AuditEventRow, AuditLevel } from '../store/index.js'
import { storedRow } from './chain.js'

/** One row of the log, with `summary` and `details` parsed (an unparseable one is returned as its text). */
export interface AuditEntry {
  readonly seq: number
  readonly level: AuditLevel
  readonly at: string
  readonly principal: string | null
  readonly surface: string
  readonly action: string
  readonly summary: unknown
  readonly selection_id: string | null
  readonly plan_id: string | null
  readonly operation_id: string | null
  readonly target_id: string | null
  readonly details: unknown
  readonly prev_hash: string
  readonly hash: string
}

export function toEntry(row: AuditEventRow): AuditEntry {
  return { ...storedRow(row), summary: parseJson(row.summary), details: row.details === null ? null : parseJson(row.details) }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback
  return Math.min(max, Math.max(1, Math.floor(limit)))
}
