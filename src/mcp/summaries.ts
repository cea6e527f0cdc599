import type { Continuation, IncompleteReason, Warning } from '../contract/index.js'

/** The completeness fields every collection carries, whatever its items are called. */
export interface Completeness {
  readonly complete: boolean
  readonly incomplete_reasons: readonly IncompleteReason[]
  readonly continuation?: Continuation | null
  readonly warnings?: readonly Warning[]
}

/** `COMPLETE`, or `INCOMPLETE (CLIENT_LIMIT_REACHED: max_pages=1; SOURCE_UNAVAILABLE: shard-2)`. */
export function completenessLabel(value: Completeness): string {
  if (value.complete) return 'COMPLETE'
  const reasons = value.incomplete_reasons.map((r) => {
    const detail = r.limit ? `${r.limit.name}=${r.limit.value}` : r.source ? r.source : r.retry_after_seconds !== undefined ? `retry after ${r.retry_after_seconds}s` : ''
    return detail ? `${r.code}: ${detail}` : r.code
  })
  return `INCOMPLETE (${reasons.join('; ') || 'no reason given'})`
}

/** What the agent can do to finish, in one clause: the continuation as given, never an invented one. */
export function continuationHint(continuation: Continuation | null | undefined): string {
  if (!continuation) return 'no continuation is available: do not invent one; narrow the request or report the result as partial'
  switch (continuation.kind) {
    case 'next_cursor':
      return 'continue with the cursor in structuredContent.continuation, passed back unchanged as `cursor`'
    case 'retry_after':
      return `wait ${continuation.retry_after_seconds}s (not before ${continuation.not_before}), then continue${continuation.cursor ? ' with the cursor in structuredContent.continuation' : ''}`
    case 'narrow_query':
      return `narrow the query: ${continuation.message}`
    case 'retry_with_deadline':
      return `retry with budget.deadline_ms of at least ${continuation.minimum_deadline_ms}${continuation.cursor ? ', with the cursor in structuredContent.continuation' : ''}`
  }
}

export function warningsClause(warnings: readonly Warning[] | undefined): string {
  if (!warnings || warnings.length === 0) return ''
  return ` Warnings (they do not change completeness): ${warnings.map((w) => (w.source ? `${w.code} (${w.source})` : w.code)).join(', ')}.`
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/**
 * A collection's summary: completeness first, then what came back and what it proves.
 *
 * @example "INCOMPLETE (CLIENT_LIMIT_REACHED: max_pages=1): 100 records returned, more may exist; continue with the cursor in structuredContent.continuation, passed back unchanged as `cursor`."
 */
export function collectionSummary(value: Completeness, returned: number, where: string, noun = 'record', walkReturned?: number): string {
  // A continued walk: this part's count alone would misstate what the walk found (an empty last part proves nothing alone).
  if (walkReturned !== undefined) {
    const label = completenessLabel(value)
    const part = `this call returned ${plural(returned, noun)}; the whole walk has returned ${plural(walkReturned, noun)} from ${where}`
    if (value.complete) return `${label}: ${part}, and the whole scope was examined${walkReturned === 0 ? ', so it proves there are none' : ''}.${warningsClause(value.warnings)}`
    return `${label}: ${part}, more may exist; ${continuationHint(value.continuation)}. Show these reasons to the person before asking for any approval based on this result.${warningsClause(value.warnings)}`
  }
  const label = completenessLabel(value)
  if (value.complete) {
    const proof = returned === 0 ? 'the whole scope was examined, so this empty result proves there are none' : 'the whole scope was examined'
    return `${label}: ${plural(returned, noun)} in ${where}; ${proof}.${warningsClause(value.warnings)}`
  }
  const proof = returned === 0 ? 'this empty result does NOT prove there are none' : 'more may exist'
  return `${label}: ${plural(returned, noun)} returned from ${where}, ${proof}; ${continuationHint(value.continuation)}. Show these reasons to the person before asking for any approval based on this result.${warningsClause(value.warnings)}`
}

export { plural }
