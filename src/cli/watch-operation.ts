import type { Gateway } from '../gateway/index.js'
import { FINISHED_STATES, type OperationView } from '../operations/index.js'
import { duration, type Progress, thousands } from './progress.js'
import { cellText } from './table-cell.js'

const POLL_MS = 500

/** One progress line: targets done of all, each outcome, the rate and the time left at that rate. */
export function operationProgressLine(op: OperationView, elapsedMs: number, doneAtStart: number): string {
  const c = op.counts
  const done = op.target_count - c.pending - c.in_flight
  const rate = elapsedMs > 0 ? ((done - doneAtStart) * 1000) / elapsedMs : 0
  const left = rate > 0 && done < op.target_count ? ` · ~${duration(((op.target_count - done) / rate) * 1000)} left` : ''
  const paused = op.paused ? ` · paused until ${op.paused.until} (${cellText(op.paused.reason)})` : ''
  const throttled = op.rate_limit_hits > 0 ? ` · rate limited ${thousands(op.rate_limit_hits)}x` : ''
  return `${op.state}${paused}: ${thousands(done)}/${thousands(op.target_count)} targets · succeeded ${thousands(c.succeeded)}, failed ${thousands(c.failed)}, skipped ${thousands(c.skipped)}, unknown ${thousands(c.unknown)}${throttled} · ${rate.toFixed(1)}/s · ${duration(elapsedMs)}${left}`
}

/**
 * Follows an operation until it finishes, `timeoutMs` passes or `signal` aborts (Ctrl-C), reporting each state
 * to `progress`; returns the last view (finished or not: the caller says which). The caller has already checked
 * the actor may read it.
 */
export async function watchOperation(
  gateway: Gateway,
  operationId: string,
  options: { readonly timeoutMs: number; readonly progress: Progress; readonly signal?: AbortSignal },
): Promise<OperationView> {
  const started = Date.now()
  const deadline = started + options.timeoutMs
  let doneAtStart: number | null = null
  try {
    for (;;) {
      const view = await gateway.operations.waitFor(operationId, Math.max(1, Math.min(POLL_MS, deadline - Date.now())))
      doneAtStart ??= view.target_count - view.counts.pending - view.counts.in_flight
      options.progress.update(operationProgressLine(view, Date.now() - started, doneAtStart))
      if (FINISHED_STATES.has(view.state) || Date.now() >= deadline || options.signal?.aborted) return view
    }
  } finally {
    options.progress.done()
  }
}
