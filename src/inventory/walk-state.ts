import type { SourceGap } from './cursor-codec.js'

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
}

/** A source that did not answer: the walk goes on with the others and names it. */
export interface Failure {
  readonly source: string
  readonly message: string
  readonly status?: number
}

/** One gap of a kind per source: a source cut short on every page is still one reason. */
export function addGap(source: MutableProgress, gap: SourceGap): void {
  if (!source.gaps.some((g) => g.code === gap.code)) source.gaps.push(gap)
}

/**
 * Adds one page's unjudgeable records to the source's SHAPE_MISMATCH gap: one gap per source, counting every
 * record of the walk (continuations included) and naming every field involved.
 */
export function addShapeGap(source: MutableProgress, page: { readonly count: number; readonly absent: readonly string[]; readonly mistyped: readonly string[] }): void {
  if (page.count <= 0) return
  const at = source.gaps.findIndex((g) => g.code === 'SHAPE_MISMATCH')
  const before = at < 0 ? undefined : source.gaps[at]
  const union = (a: readonly string[] | undefined, b: readonly string[]) => [...new Set([...(a ?? []), ...b])].sort()
  const gap: SourceGap = {
    code: 'SHAPE_MISMATCH',
    count: (before?.count ?? 0) + page.count,
    absent: union(before?.absent, page.absent),
    mistyped: union(before?.mistyped, page.mistyped),
  }
  if (at < 0) source.gaps.push(gap)
  else source.gaps[at] = gap
}
