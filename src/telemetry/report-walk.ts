import type { Telemetry } from './telemetry.js'

/** How a walk ended, as its envelope or summary says. */
export interface WalkEnd {
  readonly complete: boolean
  readonly incomplete_reasons: readonly { readonly code: string }[]
}

/** One walk: complete or partial, and each reason code of a partial one. */
export function reportWalk(telemetry: Telemetry | undefined, resource: string, walk: WalkEnd): void {
  if (!telemetry) return
  telemetry.add('warrant_walks_total', { resource, outcome: walk.complete ? 'complete' : 'partial' })
  for (const code of new Set(walk.incomplete_reasons.map((r) => r.code))) telemetry.add('warrant_walk_incomplete_reasons_total', { resource, reason: code })
  telemetry.annotate({ 'warrant.walk.complete': walk.complete })
}
