import type { ReadPageResult } from '../connectors/connector.js'
import { MAX_ATTEMPTS, addGap, backoffSeconds, finishWith, type Failure, type MutableProgress } from './walk-state.js'

/** Restarts of one source within one call after the data moved, before the walk gives up and says so. */
export const MAX_RESTARTS = 2

/**
 * What the walk does next with a source after a read that was not a page: go on reading it, leave it for now
 * (a transient failure, resumed by the continuation), or stop the whole walk (a rate limit).
 */
export type StepAfter = { readonly kind: 'again' } | { readonly kind: 'leave' } | { readonly kind: 'rate_limited'; readonly seconds: number; readonly message: string }

/**
 * A failed read without its status, for a connector whose upstream answers none (sql): the codes a database
 * connector gives its own refusals (403 for rows a policy hides) are its classification, never an upstream's
 * answer, and a gap or reason carrying them would show them as one (`upstream_status`, "it answered 403").
 */
export function withoutStatus(result: Exclude<ReadPageResult, { kind: 'page' }>): Exclude<ReadPageResult, { kind: 'page' }> {
  if (!('status' in result)) return result
  const { status: _, ...rest } = result
  return rest
}

/**
 * Turns a failed read into the source's state. Permanent failures finish the source with a gap, so no
 * continuation ever sends the failing request again; transient ones leave it unfinished with a wait, until too
 * many in a row make them permanent too.
 */
export function afterFailure(
  source: MutableProgress,
  result: Exclude<ReadPageResult, { kind: 'page' }>,
  restartable: boolean,
  failures: Failure[],
  maxWait: number,
): StepAfter {
  switch (result.kind) {
    case 'rate_limited': {
      source.attempts += 1
      if (source.attempts > MAX_ATTEMPTS) {
        const wait = Math.max(0, result.retryAfterSeconds ?? backoffSeconds(source.attempts, maxWait))
        finishWith(
          source,
          { code: 'SOURCE_UNAVAILABLE', status: 429, ended: 'rate_limited_repeatedly', wait },
          `${result.message}; it rate limited the walk ${source.attempts} times in a row, so the walk gave up on it`,
        )
        return { kind: 'leave' }
      }
      if (tooLong(source, result.message, 429, result.retryAfterSeconds, maxWait)) return { kind: 'leave' }
      const named = result.retryAfterSeconds !== undefined
      const seconds = named ? Math.max(0, result.retryAfterSeconds!) : backoffSeconds(source.attempts, maxWait)
      return { kind: 'rate_limited', seconds, message: named ? result.message : `${result.message}; backing off ${seconds} s` }
    }
    case 'unavailable':
      if (tooLong(source, result.message, result.status, result.retryAfterSeconds, maxWait)) return { kind: 'leave' }
      return transient(source, result.message, result.status, result.retryAfterSeconds, failures, maxWait)
    case 'refused':
      finishWith(source, { code: 'SOURCE_UNAVAILABLE', ...(result.status === undefined ? {} : { status: result.status }) }, result.message)
      return { kind: 'leave' }
    case 'forbidden':
      finishWith(source, { code: 'VISIBILITY_RESTRICTED', ...(result.status === undefined ? {} : { status: result.status }) }, result.message)
      return { kind: 'leave' }
    case 'result_limit':
      finishWith(source, { code: 'RESULT_LIMIT_REACHED', ...(result.limit === undefined ? {} : { limit: result.limit }) }, result.message)
      return { kind: 'leave' }
    case 'cursor_expired':
      // Never restart the source from the beginning: that would merge two attempts into one answer.
      finishWith(source, { code: 'CURSOR_EXPIRED' }, result.message)
      return { kind: 'leave' }
    case 'moved':
      // Only a source this call began may start over: its earlier records went nowhere but this call's seen
      // filter, so reading it again cannot hand the caller an id twice.
      if (restartable && source.restarts < MAX_RESTARTS) {
        source.restarts += 1
        source.position = null
        source.count = 0
        source.total = undefined
        source.totalMoved = false
        // what the first pass's pages said of themselves (records not judged, an upstream's own flag) is said again by
        // the pass that reads them anew: kept, each would count twice
        source.gaps = []
        source.notes = {}
        return { kind: 'again' }
      }
      finishWith(
        source,
        { code: 'SNAPSHOT_INVALIDATED' },
        `${result.message}; ${restartable ? `it moved again after ${source.restarts} restart(s)` : 'an earlier part of the walk already returned its records, so it cannot start over'}`,
      )
      return { kind: 'leave' }
  }
}

/** A read that threw: the connector could not say what happened, so it may clear with time. */
export function afterThrow(source: MutableProgress, message: string, failures: Failure[], maxWait: number): StepAfter {
  return transient(source, `the read of source "${source.source}" failed: ${message}`, undefined, undefined, failures, maxWait)
}

/**
 * A wait the upstream named past the walk's bound ends the source: a continuation that must wait a day (or past
 * the cursor's age, when it could never be followed) is no continuation, and an absurd number is not a date.
 */
function tooLong(source: MutableProgress, message: string, status: number | undefined, asked: number | undefined, maxWait: number): boolean {
  if (asked === undefined || asked <= maxWait) return false
  finishWith(
    source,
    { code: 'SOURCE_UNAVAILABLE', ...(status === undefined ? {} : { status }), ended: 'wait_too_long', wait: asked },
    `${message}: it asks the walk to wait ${asked} s, more than the longest wait a walk names (${maxWait} s: execution.max_retry_after_seconds, within the cursor's age), so the walk gave up on it`,
  )
  return true
}

function transient(source: MutableProgress, message: string, status: number | undefined, retryAfter: number | undefined, failures: Failure[], maxWait: number): StepAfter {
  source.attempts += 1
  if (source.attempts > MAX_ATTEMPTS) {
    finishWith(
      source,
      { code: 'SOURCE_UNAVAILABLE', ...(status === undefined ? {} : { status }), ended: 'failed_repeatedly', wait: Math.max(0, retryAfter ?? backoffSeconds(source.attempts, maxWait)) },
      `${message}; it failed ${source.attempts} times in a row, so the walk gave up on it`,
    )
    return { kind: 'leave' }
  }
  failures.push({ source: source.source, message, ...(status === undefined ? {} : { status }), retryAfterSeconds: retryAfter ?? backoffSeconds(source.attempts, maxWait) })
  return { kind: 'leave' }
}

/** A page's total at odds with the pass so far: `what` it was, and `mark`, where and how (the same on a pass that finds the same). */
export interface CountConflict {
  readonly what: string
  readonly mark: string
  readonly message: string
}

/**
 * Why a page's total shows the source moved, or null: it differs from the one before it in this pass, or it is
 * below the records the pass has already received. Page numbers,
 * opaque cursors and links prove nothing of where the walk stands: a record deleted from a page already read shifts
 * the next one onto that page, never read, and the walk's count can still meet the new total. Offset pages check
 * only the record before them, which two changes between reads leave in place in a list ordered by what changes
 * (newest first: one record updated to the front, one already read deleted): the total moving is what shows it.
 * Keyset positions start after the last key read, wherever records go.
 * A total the config reads from the wrong place (this page's count, a page size) conflicts so too, at the same point of
 * every pass: `mark` lets the walk tell that from the data moving (`configBlame`).
 */
export function countMoved(positions: 'keyset' | 'checked' | 'opaque' | undefined, source: MutableProgress, total: number | undefined, received: number, totalFrom?: string): CountConflict | null {
  if (positions === 'keyset' || total === undefined) return null
  const conflict =
    source.total !== undefined && total !== source.total
      ? { what: `the upstream's count of matching records went from ${source.total} to ${total} between pages`, mark: `${source.count}:${source.total}>${total}` }
      : source.count + received > total
        ? { what: `the upstream counts ${total} matching record(s), yet it has sent ${source.count + received}`, mark: `${source.count}+${received}>${total}` }
        : null
  if (conflict === null) return null
  const kind = positions === 'checked' ? 'the record before each page it checks can stay in place while others move' : 'its positions (page numbers, cursors or links) cannot show which records shifted past the walk'
  const orConfig = totalFrom === undefined ? '' : ` (unless ${totalFrom} does not count this list: a walk that meets the same again names it)`
  return { ...conflict, message: `source "${source.source}" moved under the walk: ${conflict.what}${orConfig}, and ${kind}` }
}

/**
 * The reason for a conflict between a total and the records, met by a restarted pass where the pass before met it
 * (the same numbers at the same point): the data did not move, the total does not count this list. Null otherwise.
 */
export function configBlame(source: MutableProgress, conflict: CountConflict, totalFrom: string | undefined, filtered: boolean): string | null {
  if (source.restarts === 0 || source.recount !== conflict.mark) return null
  const filter = filtered ? ', or the upstream ignores a filter it was sent and counts only the matches' : ''
  return `source "${source.source}": ${conflict.what}, at the same point of each of ${source.restarts + 1} reads from its start: the data did not move, ${totalFrom ?? "the upstream's total"} does not count the list it pages (a count of one page, a page size${filter}); point it at the number of matching records, or leave it out`
}

/**
 * After a page: the count and total of this pass, and at the source's end, the total held against what the
 * upstream sent. A walk that ends below the upstream's own count of matches is not complete. `received` is what the
 * upstream sent, before Warrant's own re-check: an upstream that ignores a filter counts the records it lets
 * through, so held against only the records that match, its total would read as a cap the walk never met.
 */
export function afterPage(source: MutableProgress, received: number, total: number | undefined, ended: boolean, totalFrom?: string): void {
  source.attempts = 0
  source.count += received
  if (total !== undefined) {
    if (source.total !== undefined && source.total !== total) source.totalMoved = true
    source.total = total
  }
  if (!ended || source.total === undefined || source.count >= source.total) return
  const found = `the upstream counts ${source.total} matching record(s) in source "${source.source}" but the walk received ${source.count}`
  if (source.totalMoved) addGap(source, { code: 'SNAPSHOT_INVALIDATED' }, `${found}, and its count changed during the walk`)
  // a cap is what it looks like; a total read from the wrong place (a collection count, another number) looks the same
  else addGap(source, { code: 'RESULT_LIMIT_REACHED' }, `${found}; the upstream stopped before its own count${totalFrom === undefined ? '' : `, or ${totalFrom} does not count this list (if so, point it at the number of matching records, or leave it out)`}`)
}
