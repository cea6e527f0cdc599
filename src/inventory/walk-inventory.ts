import { WarrantError, isWarrantError } from '../contract/index.js'
import type { Connector, ReadSession } from '../connectors/connector.js'
import type { DecodedCursor } from './cursor-codec.js'
import { queryFingerprint } from './query-fingerprint.js'
import { messageOf, readWithDeadline, type Read } from './read-with-deadline.js'
import { MAX_CURSOR_CHARS, type Budget, type SearchOptions, type SearchQuery, type WalkedRecord, type WalkSummary } from './search-types.js'
import { memorySeenFilter, tallyDuplicates, type DuplicateTally, type SeenFilter } from './seen-filter.js'
import { checkBudget, checkFilter, checkPageSize, checkSources } from './walk-checks.js'
import { expiredCursorEnvelope, walkOutcome } from './walk-outcome.js'
import { budgetAllows, sizeOfNextPage, walkPageSize } from './page-size.js'
import { afterFailure, afterPage, afterThrow, configBlame, countMoved, withoutStatus } from './source-step.js'
import { DEFAULT_MAX_WAIT_SECONDS, addGap, addShapeGap, finishWith, type Failure, type MutableProgress, type Stop } from './walk-state.js'

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
 * The one walk: like `searchAll`, but each page's new records go to `onPage` as they arrive, and the result is
 * the envelope without items. `onPage` is awaited before the next page is handed over; that page is read
 * meanwhile (at most one ahead, one read at a time), so a slow caller and a slow upstream overlap instead of
 * waiting in turn. Memory does not grow with the walk unless `onPage` or `options.seen` keep what they are
 * given. An error thrown by `onPage` ends the walk (the page read ahead is cancelled, the read session closed)
 * and is rethrown.
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
  const asked = checkPageSize(query.pageSize)
  const filter = checkFilter(query.filter)
  if (connector.sources.length === 0) throw new WarrantError('internal', 'the connector declares no source')
  const mode = options.mode ?? 'walk'
  const fingerprint = queryFingerprint({ resource: query.resource, filter, fields: query.fields }, options.scope.environment, options.scope.upstream)

  let prior: DecodedCursor | null = null
  if (query.cursor !== undefined && query.cursor !== null) {
    prior = options.cursorCodec.decode(query.cursor, fingerprint)
    checkSources(prior, connector.sources)
  }
  const pageSize = walkPageSize(connector, asked, limits.maxItems, prior)

  if (prior?.notBefore !== undefined && clock.now() < prior.notBefore) {
    const seconds = Math.ceil((prior.notBefore - clock.now()) / 1000)
    const notBefore = new Date(prior.notBefore).toISOString()
    throw new WarrantError('rate_limited', `this continuation may be followed from ${notBefore}: wait ${seconds} s more, then send the same cursor`, {
      retry_after_seconds: seconds,
      not_before: notBefore,
    })
  }

  const shape = { scope: options.scope, ordering: connector.ordering, pageSize, sources: connector.sources }
  if (prior?.expired) {
    const { items: _none, ...summary } = expiredCursorEnvelope(prior, shape, clock.now())
    return summary
  }

  options.signal?.throwIfAborted()
  const progress: MutableProgress[] = connector.sources.map((source) => {
    const before = prior?.sources.find((s) => s.source === source)
    const fresh = { source, position: null, finished: false, gaps: [], attempts: 0, count: 0, total: undefined, totalMoved: false, notes: {}, restarts: 0 }
    return before
      ? {
          ...fresh,
          position: before.position,
          finished: before.finished,
          gaps: [...before.gaps],
          attempts: before.attempts ?? 0,
          count: before.count ?? 0,
          total: before.total,
          totalMoved: before.totalMoved ?? false,
        }
      : fresh
  })
  // sources no earlier part has read from: only these may start over when the data moves
  const restartable = new Set(progress.filter((s) => s.position === null && !s.finished).map((s) => s.source))

  let session: ReadSession
  try {
    session = await connector.openSession()
  } catch (error) {
    if (isWarrantError(error)) throw error
    throw new WarrantError('upstream_unavailable', `could not open a read session: ${messageOf(error)}`)
  }

  // the read ahead is cancelled with the caller's signal, or on its own when the walk ends without it
  const discarded = new AbortController()
  const readSignal = options.signal ? AbortSignal.any([options.signal, discarded.signal]) : discarded.signal
  const readAhead = createReadAhead(session, readSignal, discarded)
  let returned = 0
  const failures: Failure[] = []
  const seenFilter = options.seen ?? memorySeenFilter()
  const duplicates: DuplicateTally = new Map()
  let pagesRead = 0
  let stop: Stop | null = null
  let snapshot: string | null = null
  let consistentSnapshot = false
  let proven = false
  let unchecked = false
  const deadlineAt = startedAt + limits.deadlineMs
  // a continuation waited past its cursor's age could never be followed
  const maxWait = Math.max(0, Math.min(options.maxRetryAfterSeconds ?? DEFAULT_MAX_WAIT_SECONDS, Math.floor(options.cursorCodec.maxAgeMs / 1000) - 1))
  // Positions each source's current pass has read from. One given again after the walk moved past it is a loop
  // (cursors p1 → p2 → p1): the same requests answer the same pages forever, neither the end nor data that moved.
  // The position just read, given again, is not: a connector may answer an empty page and stay where it is.
  const visited = new Map<string, Set<string>>()

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
        if (!budgetAllows(connector, pageSize, limits.maxItems, returned)) {
          stop = { kind: 'max_items', value: limits.maxItems }
          break walk
        }
        const remainingMs = deadlineAt - clock.now()
        if (remainingMs <= 0) {
          stop = { kind: 'deadline', inFlight: false, source: source.source }
          break walk
        }

        const size = sizeOfNextPage(connector, pageSize, limits.maxItems - returned)
        const request = { source: source.source, filter, position: source.position, pageSize: size }
        const read = (await readAhead.take(request)) ?? (await readWithDeadline(session, request, remainingMs, readSignal))

        if (read.kind === 'deadline') {
          stop = { kind: 'deadline', inFlight: true, source: source.source }
          break walk
        }
        if (read.kind === 'threw') {
          afterThrow(source, read.message, failures, maxWait)
          break
        }
        const result = read.result
        if (result.kind !== 'page') {
          // a refusal naming a config line (a keyset field the list is not in the order of) is the config misreading
          // the upstream: what its positions seemed to prove, they did not
          if (result.kind === 'refused' && result.configKey !== undefined) unchecked = true
          const told = connector.kind === 'sql' ? withoutStatus(result) : result
          const next = afterFailure(source, told, restartable.has(source.source), failures, maxWait)
          if (next.kind === 'rate_limited') {
            stop = { kind: 'rate_limited', source: source.source, seconds: next.seconds, message: next.message }
            break walk
          }
          if (next.kind === 'again') continue
          break
        }

        // the upstream's count moving between pages is the data moving, seen: the source starts over, as on `moved`
        const received = result.received ?? result.items.length
        const recount = countMoved(session.positions, source, result.total, received, result.totalFrom)
        if (recount !== null) {
          // met again where the pass before met it: the total is read from the wrong place, not the data moving
          const blame = configBlame(source, recount, result.totalFrom, Object.keys(filter).length > 0)
          if (blame !== null) {
            finishWith(source, { code: 'SOURCE_UNAVAILABLE' }, blame)
            break
          }
          source.recount = recount.mark
          const next = afterFailure(source, { kind: 'moved', message: recount.message }, restartable.has(source.source), failures, maxWait)
          if (next.kind === 'again') continue
          break
        }
        pagesRead += 1
        if (result.unchecked) unchecked = true
        const passed = source.position === null ? new Set<string>() : (visited.get(source.source) ?? new Set<string>())
        if (source.position !== null) passed.add(source.position)
        visited.set(source.source, passed)
        const looped = result.next !== null && result.next !== source.position && passed.has(result.next)
        const fresh = await seenFilter.fresh(source.source, result.items)
        // a restarted pass reads again what the seen filter already holds: those are not the data moving
        if (source.restarts === 0) tallyDuplicates(duplicates, source.source, result.items, fresh)
        if (fresh.length > 0) returned += fresh.length
        // The walk will read the next page of this source whatever the caller does with this one (unless the
        // caller fails or leaves): it is asked for now, so the upstream answers while the caller works.
        if (result.next !== null && !looped && mode === 'walk' && pagesRead < limits.maxPages && budgetAllows(connector, pageSize, limits.maxItems, returned) && deadlineAt - clock.now() > 0)
          readAhead.start(
            { source: source.source, filter, position: result.next, pageSize: sizeOfNextPage(connector, pageSize, limits.maxItems - returned) },
            deadlineAt - clock.now(),
          )
        if (fresh.length > 0) {
          await onPage(fresh.map((record) => ({ id: record.id, version: record.version, fields: record.fields, source: source.source })))
        }
        if (result.unjudged) addShapeGap(source, result.unjudged)
        if (result.upstreamIncomplete)
          addGap(
            source,
            {
              code: result.upstreamIncomplete.code,
              ...(result.upstreamIncomplete.limit === undefined ? {} : { limit: result.upstreamIncomplete.limit }),
            },
            result.upstreamIncomplete.message,
          )
        if (looped)
          finishWith(
            source,
            { code: 'SOURCE_UNAVAILABLE' },
            `source "${source.source}" gave a next position it had already given in this walk (${JSON.stringify(result.next!.slice(0, 80))}): its paging loops, so the walk cannot advance; is the configured next cursor or link the one that moves on?`,
          )
        else if (result.next === null) source.finished = true
        else source.position = result.next
        afterPage(source, received, result.total, result.next === null, result.totalFrom)
      }
    }

    // A source that started over must finish in this call: its first pass already went to the caller, and a
    // later call, with a fresh seen filter, would hand over those records a second time.
    if (stop)
      for (const source of progress)
        if (source.restarts > 0 && !source.finished)
          finishWith(source, { code: 'SNAPSHOT_INVALIDATED' }, `source "${source.source}" moved under the walk and its restarted pass did not finish within this call's budget`)

    // A record seen twice means the upstream's order moved under the walk. Under a consistent snapshot that
    // cannot be the data moving, so it is a warning about the ordering; without one, the data moved, and
    // records may have moved past the walk unseen.
    // Ids coming again on later pages are also what an id field that is not unique per record looks like, where no
    // one answer holds two of them: a new walk then finds the same, so the reason names that cause too.
    if (!session.consistentSnapshot)
      for (const source of progress) {
        const dropped = duplicates.get(source.source)
        if (dropped) addGap(source, { code: 'SNAPSHOT_INVALIDATED' }, dropped.across > 0 ? repeatedIdsNote(source.source, dropped) : undefined)
      }
    // Keyset positions start strictly after the last id read, so a record read twice is two rows of one id, not
    // data moving: the copy dropped is a row lost, and rows past a repeated id may have been skipped.
    if (session.positions === 'keyset')
      for (const source of progress) {
        const dropped = duplicates.get(source.source)
        if (dropped)
          addGap(
            source,
            { code: 'SOURCE_UNAVAILABLE', ended: 'ids_repeated' },
            `source "${source.source}" returned ${dropped.count} record(s) with an id already read (${dropped.sample.map((id) => `"${id}"`).join(', ')}) though it reads in id order`,
          )
      }
    proven = provenPart(prior, session, consistentSnapshot) && (consistentSnapshot || !unchecked) && !progress.some((s) => s.gaps.some((g) => g.code === 'SNAPSHOT_INVALIDATED'))
  } finally {
    // a page read ahead that the walk will not use: abandoned before the session it reads in is closed
    await readAhead.discard()
    try {
      await session.close()
    } catch {
      // A read session that fails to close does not change what was read.
    }
  }

  const finished = {
    connector,
    options,
    clock,
    limits,
    pageSize,
    fingerprint,
    prior,
    snapshot,
    consistentSnapshot,
    proven,
    progress,
    failures,
    duplicates,
    stop,
    returned,
    pagesRead,
  }
  return fittingOutcome(finished)
}

/**
 * The outcome, its continuation no longer than a request takes back. An upstream's next position travels in it
 * whole: one too long (a scroll id over many shards) made a continuation nothing could follow. The longest such
 * position's source is ended and named, until the continuation fits; the other sources still continue.
 */
function fittingOutcome(walk: Parameters<typeof walkOutcome>[0] & { readonly progress: MutableProgress[]; readonly failures: Failure[] }): WalkSummary {
  for (;;) {
    const outcome = walkOutcome(walk)
    const cursor = outcome.continuation !== null && 'cursor' in outcome.continuation ? outcome.continuation.cursor : undefined
    const carried = walk.progress.filter((s) => !s.finished && s.position !== null).sort((a, b) => b.position!.length - a.position!.length)[0]
    if (cursor === undefined || cursor.length <= MAX_CURSOR_CHARS || carried === undefined) return outcome
    finishWith(
      carried,
      { code: 'SOURCE_UNAVAILABLE', ended: 'position_too_long' },
      `source "${carried.source}" gave a next position of ${carried.position!.length} characters, too long for a continuation a request can send back (${MAX_CURSOR_CHARS} characters), so the rest of its records cannot be read by continuing; a walk that reads it through in one call (a larger budget) can`,
    )
    // a finished source's position is never read again: the continuation does not carry it
    carried.position = null
    // a source ended here is not to be retried: its transient failure no longer asks for a wait
    for (let i = walk.failures.length - 1; i >= 0; i--) if (walk.failures[i]!.source === carried.source) walk.failures.splice(i, 1)
  }
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

/** Ids a source gave again on later pages: the data moved, or the id field does not name one record. */
function repeatedIdsNote(source: string, dropped: { readonly across: number; readonly sample: readonly string[] }): string {
  const ids = dropped.sample.slice(0, 3).map((id) => JSON.stringify(id)).join(', ')
  return `source "${source}" gave ${dropped.across} record(s) under ids it had already given in this walk (${ids}): either records moved under the walk, or the id field (id_field, or connector.field_paths.id) is not unique per record, and then no new search finishes: \`warrant check\`'s unique_ids tells which`
}

/**
 * Can this part vouch that every record that existed for its whole duration was read? Within one consistent
 * snapshot, yes. Across a page or part boundary without one, only when positions survive movement: keyset
 * positions, or pages the connector checks against the previous page's last record. An earlier part that could
 * not vouch for itself taints the whole walk.
 */
function provenPart(prior: DecodedCursor | null, session: ReadSession, consistent: boolean): boolean {
  if (prior && prior.proven !== true) return false
  const safePositions = session.positions === 'keyset' || session.positions === 'checked'
  if (session.consistentSnapshot) return prior === null || consistent || safePositions
  return safePositions
}

type PageRequest = Parameters<typeof readWithDeadline>[1]

/**
 * At most one page read started before the walk asks for it. Reads stay one at a time in the session: the next
 * page is asked for only once the last one has come back, and the walk's next read is that one or, if the walk
 * went another way (a budget, a restart), none is sent until it has settled.
 */
function createReadAhead(session: ReadSession, signal: AbortSignal, discarded: AbortController) {
  let ahead: { readonly request: PageRequest; readonly read: Promise<Read> } | null = null
  return {
    start(request: PageRequest, remainingMs: number): void {
      const read = readWithDeadline(session, request, remainingMs, signal)
      // awaited when taken or discarded; until then, a cancelled read must not be an unhandled rejection
      read.catch(() => undefined)
      ahead = { request, read }
    },
    /** The page read ahead if it is this request; otherwise waits for it to settle and gives nothing. */
    async take(request: PageRequest): Promise<Read | null> {
      const taken = ahead
      ahead = null
      if (taken === null) return null
      const same = taken.request.source === request.source && taken.request.position === request.position && taken.request.pageSize === request.pageSize && taken.request.filter === request.filter
      if (same) return taken.read
      await taken.read.catch(() => undefined)
      return null
    },
    async discard(): Promise<void> {
      if (ahead === null) return
      const { read } = ahead
      ahead = null
      discarded.abort(new Error('the walk ended before it used the page it read ahead'))
      await read.catch(() => undefined)
    },
  }
}
