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

/**
 * A row as a listing answers it (`GET /v1/audit`, `warrant audit query`, the review pages). `refused_claim`: the
 * request the row records was refused, so its plan, selection and operation ids are the ones the request named, a
 * claim and never a link: a listing by id holds every such row (an agent's 400 naming plan X is in plan X's listing),
 * marked, for the record of who tried what.
 */
export interface ListedAuditEntry extends AuditEntry {
  readonly refused_claim: boolean
}

export function toListedEntry(row: AuditEventRow): ListedAuditEntry {
  const entry = toEntry(row)
  return { ...entry, refused_claim: isRefusedClaim(entry) }
}

/**
 * Whether a row records a caller's request that was refused: its ids are then what the caller claimed. A call row is the
 * gateway's own call for the operation (its 4xx is the upstream's answer: a 429, a 412), and a `system` row the
 * gateway's own record (a webhook delivery's receiver status and `error`): neither is a request, never a refused claim.
 */
export function isRefusedClaim(row: { readonly level: string; readonly surface: string; readonly summary: unknown }): boolean {
  return row.level === 'run' && row.surface !== 'system' && isRefusal(row.summary)
}

/** Whether a row's summary records a refused request (the CLI's `outcome`, the HTTP trail's status and error). */
export function isRefusal(summary: unknown): boolean {
  const s = summary !== null && typeof summary === 'object' && !Array.isArray(summary) ? (summary as Record<string, unknown>) : {}
  return s.outcome === 'refused' || (typeof s.status === 'number' && s.status >= 400) || s.error !== undefined
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
