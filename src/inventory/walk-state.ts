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
