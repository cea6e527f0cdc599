import {
  TRUNCATING_REASONS,
  retryDeadline,
  type Continuation,
  type Envelope,
  type IncompleteReason,
  type Warning,
} from '../contract/index.js'
import type { Connector } from '../connectors/connector.js'
import type { DecodedCursor, GapCode, SourceGap, SourceProgress, WalkCursorState } from './cursor-codec.js'
import type { DuplicateTally } from './seen-filter.js'
import type { Budget, SearchOptions, SearchScope, WalkedRecord, WalkSummary } from './search-types.js'
import { unavailableReason } from './unavailable-reason.js'
import type { Failure, MutableProgress, Stop } from './walk-state.js'

/** Everything a walk leaves behind once its read session is closed. */
export interface FinishedWalk {
  readonly connector: Pick<Connector, 'sources' | 'ordering' | 'sizedPositions'>
  readonly options: Pick<SearchOptions, 'scope' | 'cursorCodec' | 'resumable' | 'maxDeadlineMs'>
  readonly clock: { now(): number }
  readonly limits: Required<Budget>
  readonly pageSize: number
  readonly fingerprint: string
  readonly prior: DecodedCursor | null
  readonly snapshot: string | null
  readonly consistentSnapshot: boolean
  /** The walk vouches that every record that existed for its whole duration was read (see `provenPart`). */
  readonly proven: boolean
  readonly progress: readonly MutableProgress[]
  readonly failures: readonly Failure[]
  readonly duplicates: DuplicateTally
  readonly stop: Stop | null
  readonly returned: number
  readonly pagesRead: number
}

/**
 * Says as data what the walk covered: one incomplete reason per gap, failure, stop and restriction, and the
 * one continuation that recovers what is missing. A walk is complete only when there is no reason at all.
 */
export function walkOutcome(walk: FinishedWalk): WalkSummary {
  const { connector, options, clock, limits, progress, failures, stop } = walk

  // The whole walk's count, when every earlier part's cursor carried it.
  const walkReturned = walk.prior ? (walk.prior.returned === undefined ? undefined : walk.prior.returned + walk.returned) : walk.returned
  // Encoded only when a continuation needs it: signing a cursor nobody can use would be wasted work.
  const state = (notBefore?: number): WalkCursorState => ({
    fingerprint: walk.fingerprint,
    snapshot: walk.prior ? walk.prior.snapshot : walk.snapshot,
    consistent: walk.consistentSnapshot,
    proven: walk.proven,
    ...(walkReturned === undefined ? {} : { returned: walkReturned }),
    ...(notBefore === undefined ? {} : { notBefore }),
    ...(connector.sizedPositions ? { pageSize: walk.pageSize } : {}),
    sources: progress.map(
      (s): SourceProgress => ({
        source: s.source,
        position: s.position,
        finished: s.finished,
        gaps: [...s.gaps],
        attempts: s.attempts,
        count: s.count,
        ...(s.total === undefined ? {} : { total: s.total }),
        totalMoved: s.totalMoved,
      }),
    ),
  })

  // A caller that never continues the walk (a selection) is told what a new walk needs, never about a cursor it cannot use.
  const resumable = options.resumable !== false
  const reasons: IncompleteReason[] = []
  for (const source of progress) for (const gap of source.gaps) reasons.push(gapReason(source.source, gap, source.notes[gap.code], clock.now()))
  for (const failure of failures)
    reasons.push({
      code: 'SOURCE_UNAVAILABLE',
      message: `${failure.message}; its records are missing for now: retry after ${failure.retryAfterSeconds} s ${resumable ? 'with the cursor' : 'by walking again from the start'}`,
      source: failure.source,
      retry_after_seconds: failure.retryAfterSeconds,
      ...(failure.status === undefined ? {} : { upstream_status: failure.status }),
    })

  // An expired cursor or moved data ends the attempt: nothing of it may be merged into a continued walk.
  const dead = progress.some((s) => s.gaps.some((g) => g.code === 'CURSOR_EXPIRED' || g.code === 'SNAPSHOT_INVALIDATED'))
  // how a stopped walk goes on: with the cursor, unless the attempt is dead, when the answer carries none
  const resume = (how: string, again: string) =>
    dead ? 'no cursor resumes it, since this attempt cannot be completed (see the other reasons): start a new walk' : resumable ? how : again
  // One wait covers every source that must be tried again, and a rate limit that stopped the walk.
  const waits = [...failures.map((f) => f.retryAfterSeconds), ...(stop?.kind === 'rate_limited' ? [stop.seconds] : [])]
  const retryAfter = (): Continuation => {
    const seconds = Math.max(...waits)
    const notBefore = clock.now() + seconds * 1000
    return { kind: 'retry_after', retry_after_seconds: seconds, not_before: new Date(notBefore).toISOString(), cursor: options.cursorCodec.encode(state(notBefore)) }
  }

  let continuation: Continuation | null = null
  if (stop) {
    const cursor = options.cursorCodec.encode(state())
    switch (stop.kind) {
      case 'page':
        reasons.push({ code: 'MORE_PAGES_AVAILABLE', message: `one page was read; more pages are available${resumable ? ' with the cursor' : ''}` })
        continuation = { kind: 'next_cursor', cursor }
        break
      case 'max_pages':
      case 'max_items':
        reasons.push({
          code: 'CLIENT_LIMIT_REACHED',
          message: `Warrant stopped the walk at its own ${stop.kind === 'max_pages' ? 'page' : 'item'} budget (${stop.kind} = ${stop.value}); ${resume('the cursor resumes it', 'a new walk from the start under a larger budget reads the rest')}`,
          limit: { name: stop.kind, value: stop.value },
        })
        continuation = { kind: 'next_cursor', cursor }
        break
      case 'deadline':
        reasons.push({
          code: 'TIME_BUDGET_EXCEEDED',
          message: `the walk's time budget of ${limits.deadlineMs} ms ran out ${stop.inFlight ? `while a page of source "${stop.source}" was being read` : `before source "${stop.source}" was finished`}; ${resume('the cursor resumes it', 'a new walk from the start under a longer deadline reads the rest')}`,
          source: stop.source,
          limit: { name: 'deadline_ms', value: limits.deadlineMs },
        })
        {
          // A page that alone outlasts the deadline needs a longer one; otherwise the same deadline makes progress.
          const minimum = retryDeadline(limits.deadlineMs, stop.inFlight, options.maxDeadlineMs)
          continuation =
            minimum === null
              ? {
                  kind: 'narrow_query',
                  message: `a page of source "${stop.source}" alone took longer than ${limits.deadlineMs} ms, the longest deadline this surface takes: narrow the filter so each page does less work, then walk each part`,
                }
              : { kind: 'retry_with_deadline', minimum_deadline_ms: minimum, cursor }
        }
        break
      case 'rate_limited':
        reasons.push({
          code: 'RATE_LIMITED',
          message: `${stop.message}; ${resume('resume with the cursor after the wait', 'walk again from the start after the wait')}`,
          source: stop.source,
          retry_after_seconds: stop.seconds,
        })
        break
    }
    if (waits.length > 0) continuation = retryAfter()
  } else if (failures.length > 0) {
    // The failed sources are still unfinished in the cursor: after the wait, following it reads only them, from
    // where they stopped. Sources that failed for good are finished in it, so their request is never sent again.
    continuation = retryAfter()
  } else {
    const cut = (code: GapCode) => progress.filter((s) => s.gaps.some((g) => g.code === code)).map((s) => s.source)
    const counted = cut('RESULT_LIMIT_REACHED')
    // The upstream's own timeout is no count a narrower filter stays under, nor the walk's deadline: a caller who
    // set deadline_ms reads TIME_BUDGET_EXCEEDED as that one, and a longer one changes nothing upstream.
    const timed = cut('TIME_BUDGET_EXCEEDED').filter((source) => !counted.includes(source))
    const named = (sources: readonly string[]) => sources.map((source) => `"${source}"`).join(', ')
    const advice = [
      counted.length > 0 ? `the upstream cut ${named(counted)} short by its own result limit; narrow the filter so each query stays under it, then walk each part` : '',
      timed.length > 0
        ? `the upstream's own time limit cut pages of ${named(timed)} short (its timeout, not this walk's: a longer deadline_ms does not help); a new walk may finish when the upstream answers in time, or narrow the filter so each query does less work, then walk each part`
        : '',
    ].filter(Boolean)
    if (advice.length > 0) continuation = { kind: 'narrow_query', message: advice.join('; '), suggestion: { sources: [...counted, ...timed] } }
    // CURSOR_EXPIRED and SNAPSHOT_INVALIDATED alone: no continuation. The recovery is a new walk, never merged with this one.
  }

  if (dead) continuation = null
  if (options.scope.restricted) reasons.push(visibilityReason(options.scope.visibility))

  const warnings: Warning[] = []
  for (const [source, dropped] of walk.duplicates)
    warnings.push({
      code: 'ORDER_FALLBACK',
      message:
        dropped.across === 0
          ? `source "${source}" returned ${dropped.count} record(s) already read in this walk; the later copies were dropped`
          : `source "${source}" returned ${dropped.count} record(s) under an id already read in this walk; the later ones were dropped (copies, where the data moved under the walk; other records, where the id field is not unique per record)`,
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
      snapshot: walk.snapshot,
      consistent_snapshot: walk.consistentSnapshot,
      stability: walk.consistentSnapshot ? 'snapshot' : walk.proven ? 'proven' : 'unproven',
      sources: [...connector.sources],
    },
    page: { returned: walk.returned, requested_size: walk.pageSize, ordering: connector.ordering, pages_read: walk.pagesRead, ...(walk.prior && walkReturned !== undefined ? { walk_returned: walkReturned } : {}) },
    warnings,
  }
}

/** A cursor past its maximum age: report it; never restart the walk behind the caller's back. */
export function expiredCursorEnvelope(
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
      stability: 'unproven',
      sources: [...shape.sources],
    },
    page: { returned: 0, requested_size: shape.pageSize, ordering: shape.ordering, pages_read: 0 },
    warnings: [],
  }
}

function gapReason(source: string, gap: SourceGap, note: string | undefined, now: number): IncompleteReason {
  const said = note === undefined ? '' : `${note}; `
  switch (gap.code) {
    case 'RESULT_LIMIT_REACHED':
      return {
        code: 'RESULT_LIMIT_REACHED',
        message: `${said}the upstream stopped source "${source}" at its own result limit${gap.limit === undefined ? '' : ` (${gap.limit})`} before it ran out of matches`,
        source,
        ...(gap.limit === undefined ? {} : { limit: { name: 'upstream_result_limit', value: gap.limit } }),
      }
    case 'TIME_BUDGET_EXCEEDED':
      return {
        code: 'TIME_BUDGET_EXCEEDED',
        message: `${said}the upstream's own time budget cut a page of source "${source}" short: its timeout, not this walk's deadline_ms`,
        source,
      }
    case 'CURSOR_EXPIRED':
      return {
        code: 'CURSOR_EXPIRED',
        message: `${said}the upstream cursor of source "${source}" expired; the rest of that source was not read and the walk was not restarted`,
        source,
      }
    case 'SHAPE_MISMATCH':
      return shapeReason(source, gap)
    case 'SNAPSHOT_INVALIDATED':
      return {
        code: 'SNAPSHOT_INVALIDATED',
        message: `${said}records of source "${source}" moved while the walk, which has no snapshot, was reading it; some may have been skipped or read twice`,
        source,
      }
    case 'SOURCE_UNAVAILABLE':
      return unavailableReason(source, gap, note, now)
    case 'VISIBILITY_RESTRICTED':
      return {
        code: 'VISIBILITY_RESTRICTED',
        message: `${note ?? `source "${source}" refused the credential earlier in this walk${gap.status === undefined ? '' : ` (it answered ${gap.status})`}`}; its records are outside what this credential can see`,
        source,
        ...(gap.status === undefined ? {} : { upstream_status: gap.status }),
      }
  }
}

/** Names every field and counts the records, so the fix (field_paths, types, absent_means_null) is plain. */
function shapeReason(source: string, gap: SourceGap): IncompleteReason {
  const absent = gap.absent ?? []
  const mistyped = gap.mistyped ?? []
  const count = gap.count ?? 0
  const idless = gap.idless
  const versionless = gap.versionless
  const judged = count - (idless?.count ?? 0) - (versionless?.count ?? 0)
  const what = [
    absent.length > 0 ? `lacked declared field(s) ${absent.join(', ')}` : '',
    mistyped.length > 0 ? `carried field(s) ${mistyped.join(', ')} with another type than declared` : '',
  ].filter(Boolean)
  const parts = [
    judged > 0
      ? `${judged} record(s) of source "${source}" ${what.join(' or ')}; they could not be judged and are not in the result (${absent.length > 0 ? 'fix connector.field_paths or fields, or declare the field in absent_means_null if its absence means null' : 'correct the stored values, or declare each field as the type its values have'})`
      : '',
    idless
      ? `${idless.count} row(s) of source "${source}" that meet the filter have no id ("${idless.field}" is NULL): they name no record, so no change could address them, and they are not in the result (give them ids, or filter them out with {"${idless.field}": {"is_null": false}})`
      : '',
    versionless ? versionlessPart(source, versionless) : '',
  ].filter(Boolean)
  return {
    code: 'SHAPE_MISMATCH',
    message: parts.join('; '),
    source,
    fields: [...new Set([...absent, ...mistyped, ...(idless ? [idless.field] : []), ...(versionless?.field === undefined ? [] : [versionless.field])])].sort(),
    record_count: count,
  }
}

/** Records with no version: a change could not be made conditional on the version reviewed, so none is frozen. */
function versionlessPart(source: string, versionless: NonNullable<SourceGap['versionless']>): string {
  const lead = `${versionless.count} record(s) of source "${source}" carry no version`
  if (versionless.field !== undefined)
    return `${lead} (version field "${versionless.field}" null or empty): no change could be made conditional on the version read, so they are not in the result (fix connector.version.field or version_field, or give those records a version)`
  return `${lead}: connector.version is {from: etag} and the list answer gives no ETag for them (no ETag header, no etag, _etag or version member), so no change could be made conditional on the version read and they are not in the result (have the list carry each item's ETag as an etag member, or set connector.version to {from: field, field: …} naming a field that changes on every write)`
}

function visibilityReason(visibility: string): IncompleteReason {
  return {
    code: 'VISIBILITY_RESTRICTED',
    message: `only ${visibility} were searched; records outside that visibility are neither counted nor named`,
  }
}
