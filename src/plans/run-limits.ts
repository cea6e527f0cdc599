import type { ConnectorConfig, WarrantConfig } from '../config/index.js'
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
  /**
   * A sql resource's `connector.write_window`: targets one UPDATE writes, so in flight at once (null: unset, a window is
   * the concurrency). It sizes the run as the concurrency does, and was read from the connector at run time, unseen.
   * Absent for an http resource (it has no write pacing of its own) and on plans proposed before plans bound it.
   */
  readonly write_window?: number | null
}

const KEYS = ['concurrency', 'batch_size', 'max_writes_per_second', 'halt_after_consecutive_errors', 'halt_after_validation_failures', 'max_retry_after_seconds'] as const

/**
 * The limits the config asks now, in the plan's own form (an absent rate or window is null); `connector`: the plan's
 * resource's, whose write pacing is bound too (none given: the `execution:` settings alone).
 */
export function runLimitsOf(execution: ExecutionConfig, connector?: ConnectorConfig): RunLimits {
  return {
    concurrency: execution.concurrency,
    batch_size: execution.batch_size,
    max_writes_per_second: execution.max_writes_per_second ?? null,
    halt_after_consecutive_errors: execution.halt_after_consecutive_errors,
    halt_after_validation_failures: execution.halt_after_validation_failures,
    max_retry_after_seconds: execution.max_retry_after_seconds,
    ...(connector?.kind === 'sql' ? { write_window: connector.write_window ?? null } : {}),
  }
}

/** Each bound key whose value `now` differs from, with both values; a key the plan never bound is no difference. */
function changedKeys(bound: RunLimits, now: RunLimits): { key: string; bound: unknown; now: unknown }[] {
  const changed: { key: string; bound: unknown; now: unknown }[] = KEYS.filter((k) => bound[k] !== now[k]).map((k) => ({ key: `execution.${k}`, bound: bound[k], now: now[k] }))
  if ('write_window' in bound && bound.write_window !== now.write_window) changed.push({ key: 'connector.write_window', bound: bound.write_window, now: now.write_window })
  return changed
}

/** Whether a plan bound to `bound` (absent: proposed before plans bound them, so any) is of the limits configured now (`runLimitsOf`). */
export function sameRunLimits(bound: RunLimits | undefined, now: RunLimits): boolean {
  return bound === undefined || changedKeys(bound, now).length === 0
}

/**
 * The drift when the config's limits differ from the plan's, naming each key with both values; any difference, a
 * tightening too: the operation runs under the plan's values, and an operator who changed them meant other ones, so
 * the plan is proposed and reviewed again. None for a plan proposed before plans bound them (or bound the
 * write_window): judged as then.
 *
 * @example runLimitsDriftOf(bound, runLimitsOf({ ...execution, halt_after_consecutive_errors: 50 }), 'things')?.code // 'run_limits_changed'
 */
export function runLimitsDriftOf(bound: RunLimits | undefined, now: RunLimits, resource: string): ConfigDrift | null {
  if (bound === undefined) return null
  const named = (key: string) => (key.startsWith('connector.') ? `resources.${resource}.${key}` : key)
  const changed = changedKeys(bound, now).map((c) => `${named(c.key)} is now ${c.now ?? 'unset'}, not the ${c.bound ?? 'unset'} this plan was proposed under`)
  if (changed.length === 0) return null
  return { code: 'run_limits_changed', message: `the run's stop rules or pacing changed since this plan was proposed (${changed.join('; ')}); propose and review it again` }
}
