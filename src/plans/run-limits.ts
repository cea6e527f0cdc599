import { canonicalJson } from '../contract/index.js'
import type { WarrantConfig } from '../config/index.js'
import type { ConfigDrift } from './schemas.js'

/** The `execution:` settings a plan binds: how hard its run may push, and when it stops. */
export type ExecutionConfig = Pick<
  WarrantConfig['execution'],
  'concurrency' | 'batch_size' | 'max_writes_per_second' | 'halt_after_consecutive_errors' | 'halt_after_validation_failures' | 'max_retry_after_seconds'
>

/**
 * The stop rules and pacing a plan is proposed under and its operation runs under. They were read from the global config
 * at commit, unseen by the reviewer and outside the approval: an operator raising `halt_after_consecutive_errors` from 5
 * to 500 (or the concurrency) between approval and commit loosened the run nobody reviewed that way. So the plan keeps
 * them (in its stored policy), its view shows them, its digest covers them, and a config that differs since is drift.
 */
export interface RunLimits {
  readonly concurrency: number
  readonly batch_size: number
  /** null: no rate bound beyond the concurrency */
  readonly max_writes_per_second: number | null
  readonly halt_after_consecutive_errors: number
  readonly halt_after_validation_failures: number
  readonly max_retry_after_seconds: number
}

const KEYS = ['concurrency', 'batch_size', 'max_writes_per_second', 'halt_after_consecutive_errors', 'halt_after_validation_failures', 'max_retry_after_seconds'] as const

/** The limits the config asks now, in the plan's own form (an absent rate is null). */
export function runLimitsOf(execution: ExecutionConfig): RunLimits {
  return {
    concurrency: execution.concurrency,
    batch_size: execution.batch_size,
    max_writes_per_second: execution.max_writes_per_second ?? null,
    halt_after_consecutive_errors: execution.halt_after_consecutive_errors,
    halt_after_validation_failures: execution.halt_after_validation_failures,
    max_retry_after_seconds: execution.max_retry_after_seconds,
  }
}

/** Whether a plan bound to `bound` (absent: proposed before plans bound them, so any) is one of the limits configured now. */
export function sameRunLimits(bound: RunLimits | undefined, execution: ExecutionConfig): boolean {
  return bound === undefined || canonicalJson(bound) === canonicalJson(runLimitsOf(execution))
}

/**
 * The drift when the config's limits differ from the plan's, naming each key with both values; any difference, a
 * tightening too: the operation runs under the plan's values, and an operator who changed them meant other ones, so
 * the plan is proposed and reviewed again. None for a plan proposed before plans bound them: judged as then.
 *
 * @example runLimitsDriftOf(bound, { ...execution, halt_after_consecutive_errors: 50 })?.code // 'run_limits_changed'
 */
export function runLimitsDriftOf(bound: RunLimits | undefined, execution: ExecutionConfig): ConfigDrift | null {
  if (bound === undefined) return null
  const now = runLimitsOf(execution)
  const changed = KEYS.filter((k) => bound[k] !== now[k]).map((k) => `execution.${k} is now ${now[k] ?? 'unset'}, not the ${bound[k] ?? 'unset'} this plan was proposed under`)
  if (changed.length === 0) return null
  return { code: 'run_limits_changed', message: `the run's stop rules or pacing changed since this plan was proposed (${changed.join('; ')}); propose and review it again` }
}
