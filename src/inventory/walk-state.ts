import type { GapCode, SourceGap } from './cursor-codec.js'

/** Why a walk ended before every source was finished; each one is reported with a cursor that resumes it. */
export type Stop =
  | { readonly kind: 'max_pages'; readonly value: number }
  | { readonly kind: 'max_items'; readonly value: number }
  | { readonly kind: 'deadline'; readonly inFlight: boolean; readonly source: string }
  | { readonly kind: 'rate_limited'; readonly source: string; readonly seconds: number; readonly message: string }
  | { readonly kind: 'page' }

export interface MutableProgress {
  readonly source: string
  position: string | null
  finished: boolean
  gaps: SourceGap[]
  attempts: number
  count: number
  total: number | undefined
  totalMoved: boolean
  /** What the upstream said when a gap opened in this part of the walk; later parts only have the gap. */
  notes: Partial<Record<GapCode, string>>
  /** Times this part restarted the source from its beginning after the data moved. */
  restarts: number
  /** Where the last pass's total conflicted with its records (`CountConflict.mark`): the same again is no move. */
  recount?: string
}

/** A source that failed in a way that may clear with time: the walk goes on with the others and names it. */
export interface Failure {
  readonly source: string
  readonly message: string
  readonly status?: number
  /** The upstream's Retry-After, or the walk's own backoff. */
  readonly retryAfterSeconds: number
}

/** Transient failures of one source in a row before the walk stops retrying it: no sequence of continuations loops. */
export const MAX_ATTEMPTS = 5

/**
 * The longest wait a walk names by default (`execution.max_retry_after_seconds`'s default): an upstream asking
 * for more ends the source instead, so no continuation promises a wait of a day (or one past the cursor's age).
 */
export const DEFAULT_MAX_WAIT_SECONDS = 300

/** Waits between attempts when the upstream names none (a 5xx, a 429 without Retry-After): 2, 4, 8, 16, 32 s, at most `maxWait`. */
export function backoffSeconds(attempts: number, maxWait: number): number {
  return Math.min(maxWait, 2 ** Math.max(1, attempts))
}

/** One gap of a kind per source: a source cut short on every page is still one reason. */
export function addGap(source: MutableProgress, gap: SourceGap, note?: string): void {
  const at = source.gaps.findIndex((g) => g.code === gap.code)
  if (at < 0) source.gaps.push(gap)
  // The same cut, now with the limit's value (a page flagged incomplete, then the cap's 422): keep the value.
  else if (gap.limit !== undefined && source.gaps[at]!.limit === undefined) source.gaps[at] = { ...source.gaps[at]!, limit: gap.limit }
  if (note !== undefined && source.notes[gap.code] === undefined) source.notes[gap.code] = note
}

/** The source cannot be read further in this walk: following a continuation never sends its failing request again. */
export function finishWith(source: MutableProgress, gap: SourceGap, note: string): void {
  source.finished = true
  addGap(source, gap, note)
}

/**
 * Adds one page's unjudgeable records to the source's SHAPE_MISMATCH gap: one gap per source, counting every
 * record of the walk (continuations included) and naming every field involved.
 */
export function addShapeGap(
  source: MutableProgress,
  page: { readonly count: number; readonly absent: readonly string[]; readonly mistyped: readonly string[]; readonly idless?: SourceGap['idless']; readonly versionless?: SourceGap['versionless'] },
): void {
  if (page.count <= 0) return
  const at = source.gaps.findIndex((g) => g.code === 'SHAPE_MISMATCH')
  const before = at < 0 ? undefined : source.gaps[at]
  const union = (a: readonly string[] | undefined, b: readonly string[]) => [...new Set([...(a ?? []), ...b])].sort()
  const gap: SourceGap = {
    code: 'SHAPE_MISMATCH',
    count: (before?.count ?? 0) + page.count,
    absent: union(before?.absent, page.absent),
    mistyped: union(before?.mistyped, page.mistyped),
    ...(page.idless || before?.idless ? { idless: { field: page.idless?.field ?? before!.idless!.field, count: (before?.idless?.count ?? 0) + (page.idless?.count ?? 0) } } : {}),
    ...(page.versionless || before?.versionless ? { versionless: summed(before?.versionless, page.versionless) } : {}),
  }
  if (at < 0) source.gaps.push(gap)
  else source.gaps[at] = gap
}

/** Two tallies of versionless records as one (the version field is the resource's: the same on every page). */
function summed(a: SourceGap['versionless'], b: SourceGap['versionless']): NonNullable<SourceGap['versionless']> {
  const field = b?.field ?? a?.field
  return { ...(field === undefined ? {} : { field }), count: (a?.count ?? 0) + (b?.count ?? 0) }
}
