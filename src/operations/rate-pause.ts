import type { Kysely } from 'kysely'
import type { Database, OperationRow, OperationTargetRow } from '../store/index.js'
import type { Telemetry } from '../telemetry/index.js'
import type { Pacer } from './pacer.js'
import { DEFAULT_MAX_RETRY_AFTER_SECONDS, type StopRuleTracker } from './stop-rules.js'
import type { HaltReason, OperationPause, StopRules } from './types.js'

/** An upstream's "not now" for one target: the seconds it asked for, and whether it named them at all. */
export interface RateLimitAnswer {
  readonly retryAfterSeconds: number
  readonly message: string
  /** the upstream named no usable wait: `retryAfterSeconds` is a default, capped at the operation's bound */
  readonly defaulted?: true
}

export interface RatePauseParts {
  readonly db: Kysely<Database>
  readonly operationId: string
  readonly owner: string
  readonly rules: StopRules
  readonly tracker: StopRuleTracker
  readonly pacer: Pacer
  readonly telemetry: Telemetry
  readonly resource: string
  readonly now: () => string
  readonly onError: (error: unknown) => void
}

/**
 * The executor's answer to a 429 (or a read's 503 with Retry-After): counted against the target's retries,
 * then every later write paused, or the operation halted. A wait the upstream did not name (a default) is at
 * most `max_retry_after_seconds`: a default of 60 s under a bound of 30 halted every such 429 for a pause
 * nobody asked for.
 *
 * The pause is written on the operation's row (`paused_until`, `pause_reason`) as it starts and cleared as
 * writes resume: for up to `max_retry_after_seconds` the operation otherwise read `running`, as if writes were
 * going on, on every surface and every instance. Row writes go in order, one after the other, fenced by the
 * lease; a failed one is logged, never fatal (the view then lacks the pause, as before).
 */
export function createRatePause(parts: RatePauseParts) {
  const { db, operationId, owner, rules, tracker, pacer, telemetry, resource } = parts
  const bound = rules.max_retry_after_seconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS
  let writes: Promise<void> = Promise.resolve()
  let shown = false
  const write = (paused_until: string | null, pause_reason: string | null) => {
    writes = writes
      .then(async () => {
        await db.updateTable('operations').set({ paused_until, pause_reason }).where('id', '=', operationId).where('lease_owner', '=', owner).execute()
      })
      .catch(parts.onError)
  }
  pacer.onResumed = () => {
    if (!shown) return
    shown = false
    write(null, null)
  }
  const show = (target: OperationTargetRow, reason: string) => {
    const until = new Date(pacer.pausedUntil()).toISOString()
    const why: Omit<OperationPause, 'until'> = { reason, target_id: target.record_id, ord: target.ord, since: parts.now() }
    shown = true
    write(until, JSON.stringify(why))
  }

  return {
    /** Counts a 429 for a target; returns the halt when it exceeded its retries, else pauses every write. */
    rateLimited(target: OperationTargetRow, answer: RateLimitAnswer): HaltReason | null {
      let { retryAfterSeconds: seconds, message } = answer
      if (answer.defaulted) {
        seconds = Math.min(seconds, bound)
        message = `${message}; waiting ${seconds} s (no wait named: the default, at most execution.max_retry_after_seconds)`
      }
      const exceeded = tracker.rateLimited({ ord: target.ord, id: target.record_id }, seconds, message)
      if (exceeded) return exceeded
      telemetry.add('warrant_executor_rate_pauses_total', { resource })
      pacer.pause(Math.max(0, seconds) * 1000)
      if (seconds > 0) show(target, message)
      return null
    },
    /**
     * A pause the row holds from an earlier executor (a restart, another instance): the rest of it is waited
     * out here too, and it stays shown until writes resume; one already over is cleared. The row's end is on that
     * executor's clock: read on a clock behind it, the rest is the pause plus the skew (an hour for a 2 s
     * Retry-After), so it is held to the bound no pause may pass (`max_retry_after_seconds`).
     */
    resumeFrom(row: OperationRow): void {
      if (row.paused_until === null) return
      const left = Math.min(Date.parse(row.paused_until) - Date.parse(parts.now()), bound * 1000)
      shown = true
      if (left > 0) pacer.pause(left)
      else pacer.onResumed?.()
    },
    /** Settles once every row write asked for so far has been made (or failed and been logged). */
    settled: () => writes,
  }
}
