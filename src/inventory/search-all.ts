import {
  TRUNCATING_REASONS,
  WarrantError,
  digestOf,
  filterSchema,
  isWarrantError,
  type Continuation,
  type Envelope,
  type Filter,
  type IncompleteReason,
  type Warning,
} from '../contract/index.js'
import type { Connector, ReadPageResult, ReadSession, SourceRecord } from '../connectors/connector.js'
import type { CursorCodec, DecodedCursor, SourceGap, SourceProgress, WalkCursorState } from './cursor-codec.js'

/**
 * `searchAll`: walk every source of a connector to a terminal state, within the caller's budgets, and say as
 * data whether the walk covered the whole scope, what it left out, why, and how to continue.
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

export interface SearchQuery {
  readonly resource: string
  readonly filter: Filter
  /** The fields the caller will project; part of the query's identity (a cursor is bound to them). */
  readonly fields?: readonly string[]
  /** Upstream page size; default 100. */
  readonly pageSize?: number
  /** A continuation cursor from an earlier part of the same walk. */
  readonly cursor?: string | null
}

/** Warrant's own limits on one call. Reaching one is reported, never hidden. */
export interface Budget {
  /** Upstream pages read in this call; default 1000. */
  readonly maxPages?: number
  /** Items returned by this call; default 100 000. The walk stops at a page boundary once it reaches this. */
  readonly maxItems?: number
  /** Wall-clock budget of this call; default 30 s. Also aborts a page read still in flight. */
  readonly deadlineMs?: number
}

export interface SearchScope {
  readonly resource: string
  /** Human-readable environment, e.g. "billing-prod (acct 4411)". Part of the query's identity. */
  readonly environment: string
  /** What the credential can see, in words. */
  readonly visibility: string
  /** The credential cannot see the whole resource: no walk can be complete, and hidden records are never named. */
  readonly restricted: boolean
}

export interface SearchOptions {
  readonly scope: SearchScope
  readonly cursorCodec: CursorCodec
  readonly clock?: { now(): number }
  /** The caller's cancellation: the call rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** `walk` (default): read to a terminal state or a budget. `page`: read one upstream page, then hand back a cursor. */
  readonly mode?: 'walk' | 'page'
}

/** A record as the walk returns it: the connector's record plus the source it came from (ids are per source). */
export type WalkedRecord = SourceRecord & { readonly source: string }

export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 10_000
export const DEFAULT_BUDGET: Required<Budget> = { maxPages: 1000, maxItems: 100_000, deadlineMs: 30_000 }

/**
 * The identity of a query, which a cursor is bound to: resource, environment, filter and field set. Key order
 * in the filter and the order of `fields` do not matter; the page size does not count (changing it while
 * resuming is harmless), nor does the cursor itself.
 *
 * @example queryFingerprint({ resource: 'subscriptions', filter: { status: 'past_due' } }, 'billing-prod')
 */
export function queryFingerprint(
  query: Pick<SearchQuery, 'resource' | 'filter' | 'fields'>,
  environment: string | null = null,
): string {
  const fields = query.fields === undefined ? null : [...new Set(query.fields)].sort()
  return digestOf({ v: 1, resource: query.resource, environment, filter: query.filter, fields })
}

type Stop =
  | { readonly kind: 'max_pages'; readonly value: number }
  | { readonly kind: 'max_items'; readonly value: number }
  | { readonly kind: 'deadline'; readonly inFlight: boolean; readonly source: string }
  | { readonly kind: 'rate_limited'; readonly source: string; readonly seconds: number; readonly message: string }
  | { readonly kind: 'page' }

interface MutableProgress {
  readonly source: string
  position: string | null
  finished: boolean
  gaps: SourceGap[]
}

interface Failure {
  readonly source: string
  readonly message: string
  readonly status?: number
}

/**
 * Walks every source of the connector, in declared order, in one read session, to a terminal state or a
 * budget, and returns the envelope. Never throws for an upstream's partial answer (those are reasons); throws
 * `WarrantError` for a bad query or cursor (`invalid_request`, `invalid_cursor`) and when no session can be
 * opened at all (`upstream_unavailable`).
 *
 * It keeps every item in memory; for walks too large for that (a selection of millions of members) use
 * `walkInventory`, which this is built on.
 *
 * @example
 * const result = await searchAll(connector, { resource: 'subscriptions', filter: { status: 'past_due' } },
 *   { maxPages: 50, deadlineMs: 10_000 }, { scope, cursorCodec })
 * if (!result.complete) show(result.incomplete_reasons)
 */
export async function searchAll(
  connector: Connector,
  query: SearchQuery,
  budget: Budget,
  options: SearchOptions,
): Promise<Envelope<WalkedRecord>> {
  const items: WalkedRecord[] = []
  const summary = await walkInventory(connector, query, budget, options, (page) => {
    for (const item of page) items.push(item)
  })
  const { status, ...rest } = summary
  return { status, items, ...rest }
}

/** The envelope of a walk without its items: every completeness field, and `page.returned` items streamed. */
export type WalkSummary = Omit<Envelope<WalkedRecord>, 'items'>

/**
 * Tells a walk which records of a page it has already seen, per source. The default keeps the ids in memory;
 * a caller streaming millions of records can answer from its own store instead, so memory stays flat.
 */
export interface SeenFilter {
  /** The records of this page of `source` not seen before in this walk, in page order; it remembers them. */
  fresh(source: string, records: readonly SourceRecord[]): Promise<readonly SourceRecord[]> | readonly SourceRecord[]
}

export interface WalkOptions extends SearchOptions {
  /** How records already read in this walk are recognised (and dropped, with an ORDER_FALLBACK warning). */
  readonly seen?: SeenFilter
}

/** The ids of every record seen, per source, in memory. */
export function memorySeenFilter(): SeenFilter {
  const bySource = new Map<string, Set<string>>()
  return {
    fresh(source, records) {
      let seen = bySource.get(source)
      if (!seen) bySource.set(source, (seen = new Set()))
      const out: SourceRecord[] = []
      for (const record of records) {
        if (seen.has(record.id)) continue
        seen.add(record.id)
        out.push(record)
      }
      return out
    },
  }
}

/** How many dropped duplicate ids a warning names (the count is always exact). */
const DUPLICATE_SAMPLE = 20

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
  const duplicates = new Map<string, { count: number; sample: string[] }>()
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
        if (fresh.length !== result.items.length) {
          const kept = new Set(fresh)
          const entry = duplicates.get(source.source) ?? { count: 0, sample: [] }
          for (const record of result.items) {
            if (kept.has(record)) continue
            entry.count += 1
            if (entry.sample.length < DUPLICATE_SAMPLE) entry.sample.push(record.id)
          }
          duplicates.set(source.source, entry)
        }
        if (fresh.length > 0) {
          returned += fresh.length
          await onPage(fresh.map((record) => ({ id: record.id, version: record.version, fields: record.fields, source: source.source })))
        }
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

  const state = (): WalkCursorState => ({
    fingerprint,
    snapshot: prior ? prior.snapshot : snapshot,
    consistent: consistentSnapshot,
    sources: progress.map((s): SourceProgress => ({ source: s.source, position: s.position, finished: s.finished, gaps: [...s.gaps] })),
  })

  const reasons: IncompleteReason[] = []
  for (const source of progress) for (const gap of source.gaps) reasons.push(gapReason(source.source, gap))
  for (const failure of failures)
    reasons.push({
      code: 'SOURCE_UNAVAILABLE',
      message: `source "${failure.source}" did not answer (${failure.message}); its records are missing`,
      source: failure.source,
      ...(failure.status === undefined ? {} : { upstream_status: failure.status }),
    })

  let continuation: Continuation | null = null
  if (stop) {
    const cursor = options.cursorCodec.encode(state())
    switch (stop.kind) {
      case 'page':
        reasons.push({ code: 'MORE_PAGES_AVAILABLE', message: 'one page was read; more pages are available with the cursor' })
        continuation = { kind: 'next_cursor', cursor }
        break
      case 'max_pages':
      case 'max_items':
        reasons.push({
          code: 'CLIENT_LIMIT_REACHED',
          message: `Warrant stopped the walk at its own ${stop.kind === 'max_pages' ? 'page' : 'item'} budget (${stop.kind} = ${stop.value}); the cursor resumes it`,
          limit: { name: stop.kind, value: stop.value },
        })
        continuation = { kind: 'next_cursor', cursor }
        break
      case 'deadline':
        reasons.push({
          code: 'TIME_BUDGET_EXCEEDED',
          message: `the walk's time budget of ${limits.deadlineMs} ms ran out ${stop.inFlight ? `while a page of source "${stop.source}" was being read` : `before source "${stop.source}" was finished`}; the cursor resumes it`,
          source: stop.source,
          limit: { name: 'deadline_ms', value: limits.deadlineMs },
        })
        // A page that alone outlasts the deadline needs a longer one; otherwise the same deadline makes progress.
        continuation = { kind: 'retry_with_deadline', minimum_deadline_ms: stop.inFlight ? limits.deadlineMs * 2 : limits.deadlineMs, cursor }
        break
      case 'rate_limited': {
        const notBefore = new Date(clock.now() + stop.seconds * 1000).toISOString()
        reasons.push({
          code: 'RATE_LIMITED',
          message: `source "${stop.source}" is rate limited (${stop.message}); retry after ${stop.seconds} s with the cursor`,
          source: stop.source,
          retry_after_seconds: stop.seconds,
        })
        continuation = { kind: 'retry_after', retry_after_seconds: stop.seconds, not_before: notBefore, cursor }
        break
      }
    }
  } else if (failures.length > 0) {
    // The failed sources are still unfinished in the cursor: following it reads only them, from where they stopped.
    continuation = { kind: 'next_cursor', cursor: options.cursorCodec.encode(state()) }
  } else {
    const limited = progress.filter((s) => s.gaps.some((g) => g.code === 'RESULT_LIMIT_REACHED' || g.code === 'TIME_BUDGET_EXCEEDED'))
    if (limited.length > 0)
      continuation = {
        kind: 'narrow_query',
        message: `the upstream cut ${limited.map((s) => `"${s.source}"`).join(', ')} short by its own limit; narrow the filter so each query stays under it, then walk each part`,
        suggestion: { sources: limited.map((s) => s.source) },
      }
    // CURSOR_EXPIRED and SNAPSHOT_INVALIDATED alone: no continuation. The recovery is a new walk, never merged with this one.
  }

  if (options.scope.restricted) reasons.push(visibilityReason(options.scope.visibility))

  const warnings: Warning[] = []
  for (const [source, dropped] of duplicates)
    warnings.push({
      code: 'ORDER_FALLBACK',
      message: `source "${source}" returned ${dropped.count} record(s) already read in this walk; the later copies were dropped`,
      source,
      details: { dropped_duplicate_ids: dropped.sample, dropped_count: dropped.count, declared_ordering: connector.ordering },
    })

  const complete = reasons.length === 0
  return {
    status: complete ? 'complete' : 'partial',
    complete,
    truncated: reasons.some((r) => TRUNCATING_REASONS.has(r.code)),
    incomplete_reasons: reasons,
    continuation,
    scope: {
      resource: options.scope.resource,
      environment: options.scope.environment,
      visibility: options.scope.visibility,
      snapshot,
      consistent_snapshot: consistentSnapshot,
      sources: [...connector.sources],
    },
    page: { returned, requested_size: pageSize, ordering: connector.ordering, pages_read: pagesRead },
    warnings,
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

type Read =
  | { readonly kind: 'result'; readonly result: ReadPageResult }
  | { readonly kind: 'deadline' }
  | { readonly kind: 'threw'; readonly message: string }

/** setTimeout fires at once for longer delays; a deadline that long is, in practice, no deadline. */
const MAX_TIMER_MS = 2_147_483_647

class DeadlineReached extends Error {
  override readonly name = 'DeadlineReached'
}

/** One page read, aborted (and abandoned, if the connector ignores the signal) when the deadline passes. */
async function readWithDeadline(
  session: ReadSession,
  request: { source: string; filter: Filter; position: string | null; pageSize: number },
  remainingMs: number,
  callerSignal: AbortSignal | undefined,
): Promise<Read> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onCallerAbort: (() => void) | undefined
  const deadline = new Promise<Read>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DeadlineReached('the walk deadline passed'))
      resolve({ kind: 'deadline' })
    }, Math.min(remainingMs, MAX_TIMER_MS))
  })
  const cancelled = new Promise<never>((_, reject) => {
    if (!callerSignal) return
    onCallerAbort = () => {
      controller.abort(callerSignal.reason)
      reject(callerSignal.reason)
    }
    if (callerSignal.aborted) onCallerAbort()
    else callerSignal.addEventListener('abort', onCallerAbort, { once: true })
  })
  cancelled.catch(() => {})
  try {
    const page = Promise.resolve()
      .then(() => session.readPage({ ...request, signal: controller.signal }))
      .then(
        (result): Read => ({ kind: 'result', result }),
        (error: unknown): Read => (controller.signal.reason instanceof DeadlineReached ? { kind: 'deadline' } : { kind: 'threw', message: messageOf(error) }),
      )
    const read = await Promise.race([page, deadline, cancelled])
    if (callerSignal?.aborted) throw callerSignal.reason
    return read
  } finally {
    clearTimeout(timer)
    if (onCallerAbort) callerSignal?.removeEventListener('abort', onCallerAbort)
  }
}

function addGap(source: MutableProgress, gap: SourceGap): void {
  if (!source.gaps.some((g) => g.code === gap.code)) source.gaps.push(gap)
}

function gapReason(source: string, gap: SourceGap): IncompleteReason {
  switch (gap.code) {
    case 'RESULT_LIMIT_REACHED':
      return {
        code: 'RESULT_LIMIT_REACHED',
        message: `the upstream stopped source "${source}" at its own result limit${gap.limit === undefined ? '' : ` (${gap.limit})`} before it ran out of matches`,
        source,
        ...(gap.limit === undefined ? {} : { limit: { name: 'upstream_result_limit', value: gap.limit } }),
      }
    case 'TIME_BUDGET_EXCEEDED':
      return { code: 'TIME_BUDGET_EXCEEDED', message: `the upstream's own time budget cut a page of source "${source}" short`, source }
    case 'CURSOR_EXPIRED':
      return {
        code: 'CURSOR_EXPIRED',
        message: `the upstream cursor of source "${source}" expired; the rest of that source was not read and the walk was not restarted`,
        source,
      }
    case 'SNAPSHOT_INVALIDATED':
      return {
        code: 'SNAPSHOT_INVALIDATED',
        message: `records of source "${source}" moved in the ordering while the walk, which has no snapshot, was reading it; some may have been skipped`,
        source,
      }
  }
}

function visibilityReason(visibility: string): IncompleteReason {
  return {
    code: 'VISIBILITY_RESTRICTED',
    message: `only ${visibility} were searched; records outside that visibility are neither counted nor named`,
  }
}

/** A cursor past its maximum age: report it; never restart the walk behind the caller's back. */
function expiredCursorEnvelope(
  prior: DecodedCursor,
  shape: { scope: SearchScope; ordering: string; pageSize: number; sources: readonly string[] },
  now: number,
): Envelope<WalkedRecord> {
  const reasons: IncompleteReason[] = [
    {
      code: 'CURSOR_EXPIRED',
      message: `the cursor was issued ${Math.round((now - prior.issuedAt) / 1000)} s ago, past its maximum age of ${Math.round(prior.maxAgeMs / 1000)} s; start a new walk (never merge it with the earlier parts)`,
      limit: { name: 'cursor_max_age_ms', value: prior.maxAgeMs },
    },
  ]
  if (shape.scope.restricted) reasons.push(visibilityReason(shape.scope.visibility))
  return {
    status: 'partial',
    items: [],
    complete: false,
    truncated: false,
    incomplete_reasons: reasons,
    continuation: null,
    scope: {
      resource: shape.scope.resource,
      environment: shape.scope.environment,
      visibility: shape.scope.visibility,
      snapshot: prior.snapshot,
      consistent_snapshot: false,
      sources: [...shape.sources],
    },
    page: { returned: 0, requested_size: shape.pageSize, ordering: shape.ordering, pages_read: 0 },
    warnings: [],
  }
}

function checkSources(prior: DecodedCursor, sources: readonly string[]): void {
  const names = prior.sources.map((s) => s.source)
  if (names.length !== sources.length || names.some((name, i) => name !== sources[i]))
    throw new WarrantError('invalid_cursor', 'the cursor was issued for another set of sources than this resource now has', {
      reason: 'other_query',
    })
}

function checkBudget(budget: Budget): Required<Budget> {
  const out = { ...DEFAULT_BUDGET }
  for (const key of ['maxPages', 'maxItems', 'deadlineMs'] as const) {
    const value = budget[key]
    if (value === undefined) continue
    if (!Number.isInteger(value) || value <= 0) throw new WarrantError('invalid_request', `budget.${key} must be a positive integer`, { field: key })
    out[key] = value
  }
  return out
}

function checkPageSize(pageSize: number | undefined): number {
  if (pageSize === undefined) return DEFAULT_PAGE_SIZE
  if (!Number.isInteger(pageSize) || pageSize <= 0 || pageSize > MAX_PAGE_SIZE)
    throw new WarrantError('invalid_request', `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`, { field: 'pageSize' })
  return pageSize
}

function checkFilter(filter: Filter): Filter {
  const parsed = filterSchema.safeParse(filter)
  if (!parsed.success)
    throw new WarrantError('invalid_request', 'the filter is not valid', { field: 'filter', issues: parsed.error.issues.map((i) => i.message) })
  return parsed.data
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
