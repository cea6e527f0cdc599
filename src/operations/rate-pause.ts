import type { OperationTargetRow } from '../store/index.js'
import type { Telemetry } from '../telemetry/index.js'
import type { Pacer } from './pacer.js'
import { DEFAULT_MAX_RETRY_AFTER_SECONDS, type StopRuleTracker } from './stop-rules.js'
import type { HaltReason, StopRules } from './types.js'

/** An upstream's "not now" for one target: the seconds it asked for, and whether it named them at all. */
export interface RateLimitAnswer {
  readonly retryAfterSeconds: number
  readonly message: string
  /** the upstream named no usable wait: `retryAfterSeconds` is a default, capped at the operation's bound */
  readonly defaulted?: true
}

/**
 * The executor's answer to a 429 (or a read's 503 with Retry-After): counted against the target's retries,
 * then every later write paused, or the operation halted. A wait the upstream did not name (a default) is at
 * most `max_retry_after_seconds`: a default of 60 s under a bound of 30 halted every such 429 for a pause
 * nobody asked for.
 */
export function createRatePause(parts: { readonly rules: StopRules; readonly tracker: StopRuleTracker; readonly pacer: Pacer; readonly telemetry: Telemetry; readonly resource: string }) {
  const { rules, tracker, pacer, telemetry, resource } = parts
  const bound = rules.max_retry_after_seconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS
  /** Counts a 429 for a target; returns the halt when it exceeded its retries, else pauses every write. */
  return (target: OperationTargetRow, answer: RateLimitAnswer): HaltReason | null => {
    let { retryAfterSeconds: seconds, message } = answer
    if (answer.defaulted) {
      seconds = Math.min(seconds, bound)
      message = `${message}; waiting ${seconds} s (no wait named: the default, at most execution.max_retry_after_seconds)`
    }
    const exceeded = tracker.rateLimited({ ord: target.ord, id: target.record_id }, seconds, message)
    if (exceeded) return exceeded
    telemetry.add('warrant_executor_rate_pauses_total', { resource })
    pacer.pause(Math.max(0, seconds) * 1000)
    return null
  }
}
