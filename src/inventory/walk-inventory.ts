import { WarrantError, isWarrantError } from '../contract/index.js'
import type { Connector, ReadSession } from '../connectors/connector.js'
import type { DecodedCursor } from './cursor-codec.js'
import { queryFingerprint } from './query-fingerprint.js'
import { messageOf, readWithDeadline } from './read-with-deadline.js'
import type { Budget, SearchOptions, SearchQuery, WalkedRecord, WalkSummary } from './search-types.js'
import { memorySeenFilter, tallyDuplicates, type DuplicateTally, type SeenFilter } from './seen-filter.js'
import { checkBudget, checkFilter, checkPageSize, checkSources } from './walk-checks.js'
import { expiredCursorEnvelope, walkOutcome } from './walk-outcome.js'
import { addGap, addShapeGap, type Failure, type MutableProgress, type Stop } from './walk-state.js'

/**
 * The walk behind `searchAll`: every source of a connector to a terminal state, within the caller's budgets.
 *
 * Rules this module keeps (each has a test):
 * - Only `next === null` finishes a source. A short page, even an empty one, never does.
 * - Warrant's own limits are reasons (`CLIENT_LIMIT_REACHED`, `TIME_BUDGET_EXCEEDED`), with a signed cursor
 *   that resumes the same walk: a wrapper is never the silent source of incompleteness.
 * - An expired cursor (ours or the upstream's) is reported as `CURSOR_EXPIRED`; the walk is never restarted
 *   and merged silently.
 * - A source that fails is named; the other sources are still walked and their items returned.
 * - A resumed walk reads in a new session, so it is one consistent snapshot only if the connector reports the
 *   very same snapshot identifier again (see `consistentAcrossParts`).
 */

export interface WalkOptions extends SearchOptions {
  /** How records already read in this walk are recognised (and dropped, with an ORDER_FALLBACK warning). */
  readonly seen?: SeenFilter
}

/**
 * The one walk: like `searchAll`, but each page's new records go to `onPage` as they arrive (awaited before
 * the next page is read), and the result is the envelope without items. Memory does not grow with the walk
 * unless `onPage` or `options.seen` keep what they are given. An error thrown by `onPage` ends the walk
 * (the read session is closed) and is rethrown.
 *
 * @example
 * const summary = await walkInventory(connector, query, { maxPages: 10_000 }, { scope, cursorCodec }, async (page) => {
 *   await store.insertMembers(page)
 * })
 */
export async function walkInventory(
  connector: Connector,
  query: SearchQuery,
  budget: Budget,
  options: WalkOptions,
  onPage: (items: readonly WalkedRecord[]) => Promise<void> | void,
): Promise<WalkSummary> {
  const clock = options.clock ?? { now: () => Date.now() }
  const startedAt = clock.now()
  const limits = checkBudget(budget)
  const pageSize = checkPageSize(query.pageSize)
  const filter = checkFilter(query.filter)
  if (connector.sources.length === 0) throw new WarrantError('internal', 'the connector declares no source')
  const mode = options.mode ?? 'walk'
  const fingerprint = queryFingerprint({ resource: query.resource, filter, fields: query.fields }, options.scope.environment)

  let prior: DecodedCursor | null = null
  if (query.cursor !== undefined && query.cursor !== null) {
    prior = options.cursorCodec.decode(query.cursor, fingerprint)
    checkSources(prior, connector.sources)
  }

  const shape = { scope: options.scope, ordering: connector.ordering, pageSize, sources: connector.sources }
  if (prior?.expired) {
    const { items: _none, ...summary } = expiredCursorEnvelope(prior, shape, clock.now())
    return summary
  }

  options.signal?.throwIfAborted()
  const progress: MutableProgress[] = connector.sources.map((source) => {
    const before = prior?.sources.find((s) => s.source === source)
    return before
      ? { source, position: before.position, finished: before.finished, gaps: [...before.gaps] }
      : { source, position: null, finished: false, gaps: [] }
  })

  let session: ReadSession
  try {
    session = await connector.openSession()
  } catch (error) {
    if (isWarrantError(error)) throw error
    throw new WarrantError('upstream_unavailable', `could not open a read session: ${messageOf(error)}`)
  }

  let returned = 0
  const failures: Failure[] = []
  const seenFilter = options.seen ?? memorySeenFilter()
  const duplicates: DuplicateTally = new Map()
  let pagesRead = 0
  let stop: Stop | null = null
  let snapshot: string | null = null
  let consistentSnapshot = false
  const deadlineAt = startedAt + limits.deadlineMs

  try {
    snapshot = session.snapshot
    consistentSnapshot = consistentAcrossParts(prior, session)

    walk: for (const source of progress) {
      while (!source.finished) {
        if (mode === 'page' && pagesRead >= 1) {
          stop = { kind: 'page' }
          break walk
        }
        if (pagesRead >= limits.maxPages) {
          stop = { kind: 'max_pages', value: limits.maxPages }
          break walk
        }
        if (returned >= limits.maxItems) {
          stop = { kind: 'max_items', value: limits.maxItems }
          break walk
        }
        const remainingMs = deadlineAt - clock.now()
        if (remainingMs <= 0) {
          stop = { kind: 'deadline', inFlight: false, source: source.source }
          break walk
        }

        // Ask for no more than the item budget still allows, so a page rarely overshoots it; whatever a page
        // returns is kept whole (never drop what was received: the cursor resumes after the page).
        const size = Math.max(1, Math.min(pageSize, limits.maxItems - returned))
        const read = await readWithDeadline(session, { source: source.source, filter, position: source.position, pageSize: size }, remainingMs, options.signal)

        if (read.kind === 'deadline') {
          stop = { kind: 'deadline', inFlight: true, source: source.source }
          break walk
        }
        if (read.kind === 'threw') {
          failures.push({ source: source.source, message: `the read failed: ${read.message}` })
          break
        }
        const result = read.result
        if (result.kind === 'rate_limited') {
          stop = { kind: 'rate_limited', source: source.source, seconds: Math.max(0, result.retryAfterSeconds), message: result.message }
          break walk
        }
        if (result.kind === 'unavailable') {
          failures.push({ source: source.source, message: result.message, ...(result.status === undefined ? {} : { status: result.status }) })
          break
        }
        if (result.kind === 'cursor_expired') {
          // Never restart the source from the beginning: that would merge two attempts into one answer.
          source.finished = true
          addGap(source, { code: 'CURSOR_EXPIRED' })
          break
        }

        pagesRead += 1
        const fresh = await seenFilter.fresh(source.source, result.items)
        tallyDuplicates(duplicates, source.source, result.items, fresh)
        if (fresh.length > 0) {
          returned += fresh.length
          await onPage(fresh.map((record) => ({ id: record.id, version: record.version, fields: record.fields, source: source.source })))
        }
        if (result.unjudged) addShapeGap(source, result.unjudged)
        if (result.upstreamIncomplete)
          addGap(source, {
            code: result.upstreamIncomplete.code,
            ...(result.upstreamIncomplete.limit === undefined ? {} : { limit: result.upstreamIncomplete.limit }),
          })
        if (result.next === null) source.finished = true
        else source.position = result.next
      }
    }

    // A record seen twice means the upstream's order moved under the walk. Under a consistent snapshot that
    // cannot be the data moving, so it is a warning about the ordering; without one, the data moved, and
    // records may have moved past the walk unseen.
    if (!session.consistentSnapshot)
      for (const source of progress) if (duplicates.has(source.source)) addGap(source, { code: 'SNAPSHOT_INVALIDATED' })
  } finally {
    try {
      await session.close()
    } catch {
      // A read session that fails to close does not change what was read.
    }
  }

  return walkOutcome({
    connector,
    options,
    clock,
    limits,
    pageSize,
    fingerprint,
    prior,
    snapshot,
    consistentSnapshot,
    progress,
    failures,
    duplicates,
    stop,
    returned,
    pagesRead,
  })
}

/**
 * Is the walk so far one consistent snapshot? A first part is, if its session is. A resumed part opened a new
 * session; positions from the earlier part then index a possibly different state of the data, so records that
 * changed between the parts may be missed or seen twice. It stays consistent only when the connector reports a
 * snapshot and it is the very same identifier the first part read (e.g. a pinned point-in-time, or an
 * unchanged data version); otherwise `consistent_snapshot: false`, and the caller must not treat the parts as
 * one snapshot.
 */
function consistentAcrossParts(prior: DecodedCursor | null, session: ReadSession): boolean {
  if (!session.consistentSnapshot) return false
  if (!prior) return true
  return prior.consistent && session.snapshot !== null && session.snapshot === prior.snapshot
}
