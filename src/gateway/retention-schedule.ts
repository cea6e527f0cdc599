import { SYSTEM_ACTOR, type Surface } from '../contract/index.js'
import type { PruneReport } from '../selections/index.js'
import type { Gateway } from './gateway.js'
import type { Logger } from './logger.js'
import { sweepRetention } from './retention-sweep.js'

/** The audit surface of the sweeps a long-running gateway runs on its own, as of its executors' rows (the CLI's are `cli`). */
export const SCHEDULED_SURFACE = 'system' satisfies Surface

export interface RetentionSchedule {
  /** No further sweep starts; the one running stops between statements and writes its audit row. Resolves once nothing more will be written. */
  stop(): Promise<void>
}

export interface RetentionScheduleOptions {
  readonly everyMs: number
  readonly olderThanMs: number
  readonly log: Logger
  /** before the first sweep (default 0: at start, so a gateway restarted more often than `everyMs` still sweeps) */
  readonly firstAfterMs?: number
  /** rows a statement (tests); retention.ts's bound by default */
  readonly batchRows?: number
  /** told of every sweep's report (tests) */
  readonly onSwept?: (report: PruneReport) => void
}

/**
 * The retention sweep a long-running gateway (`warrant serve`, `warrant mcp`) runs every `everyMs` when
 * `retention.sweep_interval_minutes` is set. One at a time in this process: the next is timed from the end of the last.
 * Gateways sharing a store may sweep at once, harmlessly: a selection is marked by one sweep only (the mark's
 * `members_pruned_at is null` condition), and the journal entry of a selection being deleted is claimed by the sweep
 * deleting it (selections/retention-claims.ts), so no other sweep "finishes" it meanwhile: each selection is listed,
 * counted and audited by one sweep. A sweep that found nothing writes no audit row (the CLI's always does: someone asked), so an
 * hourly schedule does not fill the log with empty rows. A failed sweep is logged and the next one runs on time.
 */
export function scheduleRetentionSweeps(gateway: Pick<Gateway, 'store' | 'audit'>, options: RetentionScheduleOptions): RetentionSchedule {
  const stopping = new AbortController()
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> = Promise.resolve()
  const sweep = async () => {
    const report = await sweepRetention(gateway, {
      olderThanMs: options.olderThanMs,
      dryRun: false,
      actor: SYSTEM_ACTOR,
      surface: SCHEDULED_SURFACE,
      auditEmpty: false,
      signal: stopping.signal,
      ...(options.batchRows !== undefined ? { batchRows: options.batchRows } : {}),
    })
    if (report.selections > 0 || report.finished.length > 0)
      options.log.info({ selections: report.selections, members: report.members, excluded: report.excluded, finished: report.finished.length, stopped: report.stopped }, 'retention pruned the members of expired selections')
    options.onSwept?.(report)
  }
  const next = (afterMs: number) => {
    if (stopping.signal.aborted) return
    timer = setTimeout(() => {
      timer = null
      running = sweep()
        .catch((error: unknown) => options.log.warn({ err: error }, 'the retention sweep failed; the next one retries'))
        .finally(() => next(options.everyMs))
    }, afterMs)
    // a pending sweep never keeps the process alive; close() stops it anyway
    timer.unref?.()
  }
  next(options.firstAfterMs ?? 0)
  return {
    async stop() {
      stopping.abort()
      if (timer !== null) clearTimeout(timer)
      timer = null
      await running
    },
  }
}
