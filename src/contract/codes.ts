/**
 * The stable vocabulary of completeness. These strings are part of the public contract: clients branch on
 * them, so a code is never renamed or reused for another meaning.
 */

/** Why a collection does not cover the whole requested scope. Each one decides `complete: false`. */
export const REASON_CODES = [
  'MORE_PAGES_AVAILABLE',
  'RESULT_LIMIT_REACHED',
  'TIME_BUDGET_EXCEEDED',
  'SOURCE_UNAVAILABLE',
  'VISIBILITY_RESTRICTED',
  'CLIENT_LIMIT_REACHED',
  'CURSOR_EXPIRED',
  'RATE_LIMITED',
  'SNAPSHOT_INVALIDATED',
  'SHAPE_MISMATCH',
] as const
export type ReasonCode = (typeof REASON_CODES)[number]

/** What a reason code means, in words, for docs, terminals and review pages. */
export const REASON_TEXT: Readonly<Record<ReasonCode, string>> = {
  MORE_PAGES_AVAILABLE: 'More pages are available; the caller can ask for the next one.',
  RESULT_LIMIT_REACHED: 'The upstream applied a result limit before it ran out of matches.',
  TIME_BUDGET_EXCEEDED: 'The search stopped before it finished the planned work.',
  SOURCE_UNAVAILABLE: 'A named source failed (no answer, or an error status it named); its records are missing.',
  VISIBILITY_RESTRICTED: "The credential's permissions exclude part of the requested scope.",
  CLIENT_LIMIT_REACHED: "Warrant's own page or item budget stopped the walk.",
  CURSOR_EXPIRED: 'The cursor expired; the walk was not restarted silently.',
  RATE_LIMITED: 'The upstream rate limit stopped the walk; retry after the given time.',
  SNAPSHOT_INVALIDATED: 'The data moved under a walk that had no snapshot.',
  SHAPE_MISMATCH:
    'Records the upstream returned lack a declared field (or carry it with another type); they could not be judged and are not in the result. The config does not match the upstream.',
}

/** Reasons that mean a limit cut the result short (as opposed to a filter, an outage or a permission). */
export const TRUNCATING_REASONS: ReadonlySet<ReasonCode> = new Set<ReasonCode>([
  'RESULT_LIMIT_REACHED',
  'CLIENT_LIMIT_REACHED',
])

/**
 * How a walk knows the data held still while it read (`scope.stability`): one consistent snapshot, or proven by
 * the walk itself (keyset positions, or each page overlapping the previous one), or not at all. Absence is
 * proven only by the first two.
 */
export const STABILITY_KINDS = ['snapshot', 'proven', 'unproven'] as const
export type Stability = (typeof STABILITY_KINDS)[number]

/** Warnings concern confidence, freshness or interpretation. They never decide completeness. */
export const WARNING_CODES = ['STALE_INDEX', 'PARTIAL_FIELD_SET', 'DEFAULT_SCOPE_APPLIED', 'ORDER_FALLBACK'] as const
export type WarningCode = (typeof WARNING_CODES)[number]

/** How a caller can recover the part that is missing. Never "repeat the same query and hope". */
export const CONTINUATION_KINDS = ['next_cursor', 'retry_after', 'narrow_query', 'retry_with_deadline'] as const
export type ContinuationKind = (typeof CONTINUATION_KINDS)[number]

/** What a caller intends to do with a result; `decide()` answers per use. */
export const USES = ['report', 'investigate', 'prove_absence', 'change_from_absence', 'change_from_presence'] as const
export type Use = (typeof USES)[number]

export const DECISIONS = ['proceed', 'continue_search', 'retry_later', 'refuse_or_request_review'] as const
export type Decision = (typeof DECISIONS)[number]

/** Why one field of a record is not in the response. */
export const FIELD_OMISSION_REASONS = ['not_requested', 'denied', 'source_failed', 'absent_upstream'] as const
export type FieldOmissionReason = (typeof FIELD_OMISSION_REASONS)[number]
