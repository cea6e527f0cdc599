import { createHmac, timingSafeEqual } from 'node:crypto'
import { CURSOR_KIND_TEXT, WarrantError, cursorKindOf } from '../contract/index.js'
import type { Kysely } from 'kysely'
import { type FollowUps, NO_FOLLOW_UPS, followUpsOf } from '../plans/index.js'
import type { Database, OperationRow, OperationTargetRow } from '../store/index.js'
import { emptyCounts, type RateLimitTotals } from './ledger.js'
import { targetReasonText } from './target-reasons.js'
import type { RateLimitKind } from './wait-words.js'
export { rateLimitKindFor } from './wait-words.js'
import { FINISHED_STATES, TARGET_STATES, type HaltReason, type OperationExecution, type OperationPause, type OperationView, type StopRules, type TargetCounts, type TargetResult, type TargetState } from './types.js'

export const operationUrl = (id: string) => `/v1/operations/${encodeURIComponent(id)}`
export const resultsUrl = (id: string) => `${operationUrl(id)}/results`

export function parseExecution(row: OperationRow): OperationExecution | null {
  return row.execution === null ? null : (JSON.parse(row.execution) as OperationExecution)
}

/**
 * The operation as every surface shows it. `liveCounts` while it runs; the stored counts once it has finished.
 * `throttled`: the upstream's "not now" answers, read from the ledger (`rateLimitTotals`); `kind`: what they are
 * (`rateLimitKindFor`).
 * `now`: a pause whose end has passed is not shown (its executor may have stopped before clearing it).
 */
export function operationView(row: OperationRow, liveCounts: TargetCounts | null, throttled: RateLimitTotals, followUps: FollowUps, kind: RateLimitKind | null, now?: string): OperationView {
  const execution = parseExecution(row)
  const counts = liveCounts ?? { ...emptyCounts(), ...(JSON.parse(row.counts) as Partial<TargetCounts>) }
  return {
    operation_id: row.id,
    plan_id: row.plan_id,
    selection_id: execution?.selection.selection_id ?? null,
    selection_digest: execution?.selection.digest ?? null,
    resource: execution?.plan.resource ?? null,
    environment: execution?.plan.environment ?? null,
    action: execution ? { type: execution.plan.action.type, params: execution.plan.action.params } : null,
    state: row.state,
    target_count: Object.values(counts).reduce((a, b) => a + b, 0),
    counts,
    halt_reason: row.halt_reason === null ? null : (JSON.parse(row.halt_reason) as HaltReason),
    rate_limit_hits: throttled.hits,
    rate_limited_targets: throttled.targets,
    rate_limit_kind: kind,
    paused: pauseOf(row, now),
    stop_rules: JSON.parse(row.stop_rules) as StopRules,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
    results_url: resultsUrl(row.id),
    operation_url: operationUrl(row.id),
    follow_ups: followUps,
  }
}

/**
 * The plans following a finished operation (none while it runs: neither is proposed then). Its rest is looked for
 * only where one can exist: targets left pending (a compensation's run too: its rest is a compensation of the same
 * operation).
 */
export async function operationFollowUps(db: Kysely<Database>, row: OperationRow): Promise<FollowUps> {
  if (!isFinished(row)) return NO_FOLLOW_UPS
  const pending = (JSON.parse(row.counts) as Partial<TargetCounts>).pending ?? 0
  return followUpsOf(db, row.id, row.plan_id, { remainder: pending > 0 })
}

function pauseOf(row: OperationRow, now: string | undefined): OperationPause | null {
  if (FINISHED_STATES.has(row.state) || row.paused_until === null || row.pause_reason === null) return null
  if (now !== undefined && Date.parse(row.paused_until) <= Date.parse(now)) return null
  const why = JSON.parse(row.pause_reason) as Omit<OperationPause, 'until'>
  return { until: row.paused_until, reason: why.reason, target_id: why.target_id ?? null, ord: why.ord ?? null, since: why.since }
}

export function isFinished(row: OperationRow): boolean {
  return FINISHED_STATES.has(row.state)
}

/** `kind`: the operation's `rate_limit_kind`, which the reasons of its "not now" answers are said in. */
export function targetResult(row: OperationTargetRow, kind: RateLimitKind | null): TargetResult {
  return {
    ord: row.ord,
    id: row.record_id,
    outcome: row.state,
    reason: row.reason,
    reason_text: targetReasonText(row, kind),
    upstream_status: row.upstream_status,
    error: row.error === null ? null : messageIn(row.error),
    before: row.before === null ? null : (JSON.parse(row.before) as Record<string, unknown>),
    after: row.after === null ? null : (JSON.parse(row.after) as Record<string, unknown>),
    attempts: row.attempts,
    rate_limit_hits: Number(row.rate_limit_hits),
    updated_at: row.updated_at,
  }
}

function messageIn(error: string): string {
  try {
    const parsed = JSON.parse(error) as { message?: unknown }
    return typeof parsed.message === 'string' ? parsed.message : error
  } catch {
    return error
  }
}

export function isTargetState(value: string): value is TargetState {
  return (TARGET_STATES as readonly string[]).includes(value)
}

/**
 * Results cursors: the last ord returned, bound to one operation and one outcome filter, signed so a cursor
 * that was altered or belongs to another query is refused (`invalid_cursor`) rather than silently followed.
 */
export function createResultsCursor(key: string) {
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url')
  return {
    encode(operationId: string, outcome: TargetState | null, afterOrd: number): string {
      const payload = Buffer.from(JSON.stringify({ o: operationId, f: outcome, a: afterOrd })).toString('base64url')
      return `${payload}.${sign(payload)}`
    },
    decode(cursor: string, operationId: string, outcome: TargetState | null): number {
      const [payload, signature, extra] = cursor.split('.')
      const refuse = (why: string) => new WarrantError('invalid_cursor', `invalid results cursor: ${why}`)
      // another tool's cursor, passed as given: say which, never "altered or forged"
      const kind = cursorKindOf(cursor)
      if (kind === 'list_page' || kind === 'walk')
        throw new WarrantError('invalid_cursor', `the cursor is ${CURSOR_KIND_TEXT[kind]}, not a results cursor of an operation: use the next_cursor get_operation (part "results") gave for this operation and outcome`, { reason: 'other_tool' })
      if (!payload || !signature || extra !== undefined) throw refuse('malformed')
      const expected = Buffer.from(sign(payload))
      const given = Buffer.from(signature)
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw refuse('altered or forged')
      let decoded: { o?: unknown; f?: unknown; a?: unknown }
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof decoded
      } catch {
        throw refuse('malformed')
      }
      if (decoded.o !== operationId || (decoded.f ?? null) !== outcome) throw refuse('it belongs to another operation or outcome filter')
      if (typeof decoded.a !== 'number' || !Number.isSafeInteger(decoded.a)) throw refuse('malformed')
      return decoded.a
    },
  }
}
