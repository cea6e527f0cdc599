import type { Actor } from '../contract/index.js'
import { pruneExpiredMembers, type PruneReport } from '../selections/index.js'
import type { Gateway } from './gateway.js'

/** The audit action of a retention sweep that deleted rows (a dry run deletes none and records only its command). */
export const PRUNE_ACTION = 'retention:prune_members'

/**
 * One retention sweep on the gateway's store (see selections/retention.ts for what may be pruned), and its run-level
 * audit row through the log's append path: which selections lost their members, how many rows each, when and by whom.
 * Written even when nothing was prunable, so the trail shows the sweep ran and found nothing, unless `auditEmpty` is
 * false (the scheduled sweeps of a long-running gateway: see retention-schedule.ts).
 */
export async function sweepRetention(
  gateway: Pick<Gateway, 'store' | 'audit'>,
  options: {
    readonly olderThanMs: number
    readonly dryRun: boolean
    readonly actor: Actor | null
    readonly surface: string
    readonly auditEmpty?: boolean
    readonly signal?: AbortSignal
    readonly batchRows?: number
  },
): Promise<PruneReport> {
  const report = await pruneExpiredMembers(gateway.store.db, {
    olderThanMs: options.olderThanMs,
    dryRun: options.dryRun,
    nowIso: () => gateway.store.now(),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.batchRows !== undefined ? { batchRows: options.batchRows } : {}),
  })
  const empty = report.selections === 0 && report.finished.length === 0
  if (!report.dry_run && !(empty && options.auditEmpty === false))
    await gateway.audit.record({
      actor: options.actor,
      surface: options.surface,
      action: PRUNE_ACTION,
      summary: { outcome: 'ok', selections: report.selections, members: report.members, excluded: report.excluded, expired_before: report.expired_before },
      details: { older_than_ms: options.olderThanMs, pruned_at: report.now, pruned: report.pruned, listed_complete: report.listed_complete, finished: report.finished, stopped: report.stopped },
    })
  return report
}
