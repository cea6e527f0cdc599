import type { RunLimits } from '../plans/index.js'
import type { HaltReason, StopRuleName, StopRules, TargetState } from './types.js'

/** A target answering 429 more often than this halts the operation rather than waiting forever. */
export const DEFAULT_MAX_RATE_LIMIT_RETRIES = 10
/** The longest Retry-After pause an operation takes when its stop rules name none (committed before the rule). */
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 300

/**
 * The stop rules an operation will run under, fixed at commit from the limits its plan binds (the execution config at
 * commit for a plan proposed before plans bound them) and the selection: a selection read without a consistent
 * snapshot has each batch re-read before it is written.
 */
export function fixStopRules(limits: RunLimits, consistentSnapshot: boolean): StopRules {
  return {
    halt_on_authorization_failure: true,
    halt_on_contradicted_effect: true,
    halt_after_consecutive_errors: limits.halt_after_consecutive_errors,
    halt_after_validation_failures: limits.halt_after_validation_failures,
    max_rate_limit_retries: DEFAULT_MAX_RATE_LIMIT_RETRIES,
    max_retry_after_seconds: limits.max_retry_after_seconds,
    revalidate_membership_per_batch: !consistentSnapshot,
    batch_size: limits.batch_size,
    concurrency: limits.concurrency,
    max_writes_per_second: limits.max_writes_per_second,
    ...(limits.write_window === undefined ? {} : { write_window: limits.write_window }),
  }
}

/**
 * The halt of a run that found its resource writing elsewhere than where its plan was proposed (`moved` says how),
 * saying what the operator does next: no halt has a resume path (a halted operation is final, its
 * `operation.halted` event sent), so pointing the config back does not resume it.
 */
export function upstreamMovedHalt(operationId: string, moved: string, at: string, compensation = false): HaltReason {
  // the rest of a compensation restores the recorded before-values; it is not "the same action" again
  const rest = compensation
    ? 'a new plan restoring the recorded before-values on the targets this compensation did not finish, approved and committed like any'
    : 'a new plan of the same action over its pending targets at their frozen versions, approved and committed like any'
  const message =
    `not resumed: ${moved}. Nothing was sent by this run; a halted operation is never resumed, even once the resource points back. ` +
    `To finish the change, point the resource back where the plan was proposed, then propose the rest: warrant remainder ${operationId} ` +
    `(${rest}); to undo what the operation wrote, warrant compensate ${operationId} (once it points back)`
  return { rule: 'upstream_moved', target_id: null, ord: null, message, at }
}

/** One recorded target outcome, as the stop rules see it. */
export interface ObservedOutcome {
  readonly ord: number
  readonly id: string
  readonly state: TargetState
  /** A structural failure that halts at once (authorization, contradicted effect). */
  readonly halt?: { readonly rule: StopRuleName; readonly message: string }
  /** The upstream refused the write as invalid (a 4xx other than auth, conflict or 429). */
  readonly validation?: boolean
  readonly message?: string
}

/**
 * Applies the stop rules to outcomes in the order they are recorded. Precedence when several fire on one
 * outcome: the structural rule, then the validation threshold, then the consecutive-error streak.
 * `failed` and `unknown` extend the streak; `succeeded` and `skipped` end it.
 */
export class StopRuleTracker {
  #streak = 0
  #validationFailures: number
  readonly #rateLimitHits = new Map<number, number>()

  constructor(
    private readonly rules: StopRules,
    private readonly now: () => string,
    /** validation failures already recorded (an operation resumed after a restart) */
    validationFailuresSoFar = 0,
    /** the targets in a row that last ended failed or unknown (an operation resumed: ledger.errorsInARow) */
    streakSoFar = 0,
    /** the 429s each target was answered so far, by ord (an operation resumed: ledger.rateLimitHitsSoFar) */
    rateLimitHitsSoFar: ReadonlyMap<number, number> = new Map(),
  ) {
    this.#validationFailures = validationFailuresSoFar
    this.#streak = streakSoFar
    for (const [ord, hits] of rateLimitHitsSoFar) this.#rateLimitHits.set(ord, hits)
  }

  /**
   * Counts a 429 for the target at `ord`; the halt once it was rate limited more than `max_rate_limit_retries`
   * times, or at once when it asks for a longer pause than `max_retry_after_seconds`: an upstream asking for a
   * day (or a date a year ahead) would leave the operation `running` that long with nobody told.
   */
  rateLimited(target: { readonly ord: number; readonly id: string }, retryAfterSeconds: number, message: string): HaltReason | null {
    const longest = this.rules.max_retry_after_seconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS
    if (retryAfterSeconds > longest)
      return {
        rule: 'retry_after_too_long',
        target_id: target.id,
        ord: target.ord,
        message: `${message}: a pause of ${retryAfterSeconds} s is more than execution.max_retry_after_seconds (${longest} s); halted rather than wait, nothing was written to this target and it stays pending with every later one`,
        at: this.now(),
      }
    const hits = (this.#rateLimitHits.get(target.ord) ?? 0) + 1
    this.#rateLimitHits.set(target.ord, hits)
    if (hits <= this.rules.max_rate_limit_retries) return null
    const max = this.rules.max_rate_limit_retries
    return { rule: 'rate_limit_retries', target_id: target.id, ord: target.ord, message: `rate limited ${hits} times (more than ${max}): ${message}`, at: this.now() }
  }

  observe(outcome: ObservedOutcome): HaltReason | null {
    const at = this.now()
    const halt = (rule: StopRuleName, message: string): HaltReason => ({ rule, target_id: outcome.id, ord: outcome.ord, message, at })
    if (outcome.state === 'failed' || outcome.state === 'unknown') this.#streak += 1
    else if (outcome.state === 'succeeded' || outcome.state === 'skipped') this.#streak = 0
    if (outcome.validation) this.#validationFailures += 1

    if (outcome.halt) return halt(outcome.halt.rule, outcome.halt.message)
    if (outcome.validation && this.#validationFailures >= this.rules.halt_after_validation_failures)
      return halt(
        'validation_failures',
        `${this.#validationFailures} validation failures reached the threshold of ${this.rules.halt_after_validation_failures}; the last: ${outcome.message ?? 'rejected'}`,
      )
    if (this.#streak >= this.rules.halt_after_consecutive_errors)
      return halt(
        'consecutive_errors',
        `${this.#streak} targets in a row ended failed or unknown (threshold ${this.rules.halt_after_consecutive_errors}); the last: ${outcome.message ?? outcome.state}`,
      )
    return null
  }
}
