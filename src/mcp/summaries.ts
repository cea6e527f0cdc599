import { type Continuation, heldStill, type IncompleteReason, revealed, type Scope, type Warning } from '../contract/index.js'
import type { LookalikeIds, SelectionLookalikes } from '../selections/index.js'

/** The completeness fields every collection carries, whatever its items are called. */
export interface Completeness {
  readonly complete: boolean
  readonly incomplete_reasons: readonly IncompleteReason[]
  readonly continuation?: Continuation | null
  readonly warnings?: readonly Warning[]
  /** A search's scope: whether its walk held still decides what a complete answer proves. */
  readonly scope?: Pick<Scope, 'consistent_snapshot' | 'stability'>
}

/** What a complete walk proves, by whether it held still (the rule `decide` applies to absence). */
function completeProof(value: Completeness, found: number): string {
  if (heldStill(value)) return found === 0 ? 'the whole scope was examined, so this empty result proves there are none' : 'the whole scope was examined'
  const why = 'read without a consistent snapshot, and the walk could not prove the data held still'
  return found === 0
    ? `the whole scope was examined, but ${why}, so this empty result does NOT prove there are none`
    : `the whole scope was examined, but ${why}: a record that moved during the walk may be missing`
}

/** `COMPLETE`, or `INCOMPLETE (CLIENT_LIMIT_REACHED: max_pages=1; SOURCE_UNAVAILABLE: shard-2)`. */
export function completenessLabel(value: Completeness): string {
  if (value.complete) return 'COMPLETE'
  const reasons = value.incomplete_reasons.map((r) => {
    const detail = r.limit ? `${r.limit.name}=${r.limit.value}` : r.source ? named(r.source) : r.retry_after_seconds !== undefined ? `retry after ${r.retry_after_seconds}s` : ''
    return detail ? `${r.code}: ${detail}` : r.code
  })
  return `INCOMPLETE (${reasons.join('; ') || 'no reason given'})`
}

/**
 * With no continuation, what could still help, by the reasons: a narrower request only for a limit; a wait for a
 * source that named one; a new search for a walk that cannot go on; a fix (upstream, credential, config) for a
 * failure no request mends. Never "narrow the request" where narrowing cannot help.
 */
function noContinuationHint(reasons: readonly IncompleteReason[]): string {
  const has = (...codes: string[]) => reasons.some((r) => codes.includes(r.code))
  const waits = reasons.filter((r) => (r.code === 'SOURCE_UNAVAILABLE' || r.code === 'RATE_LIMITED') && r.retry_after_seconds !== undefined)
  const clauses = [
    has('RESULT_LIMIT_REACHED', 'CLIENT_LIMIT_REACHED', 'TIME_BUDGET_EXCEEDED', 'MORE_PAGES_AVAILABLE') ? 'a narrower request may stay within the limit' : null,
    waits.length > 0 ? `a new search from the start after ${Math.max(...waits.map((r) => r.retry_after_seconds!))}s may read the source that did not answer` : null,
    has('CURSOR_EXPIRED', 'SNAPSHOT_INVALIDATED') ? 'a new search from the start may finish' : null,
    reasons.some((r) => r.code === 'SOURCE_UNAVAILABLE' && r.retry_after_seconds === undefined) ? 'a source failed in a way no request mends, narrower or not, until what its reason names is fixed' : null,
    has('VISIBILITY_RESTRICTED') ? 'part of the scope is closed to this credential: no narrower request reaches it, only a credential that may read it' : null,
    has('SHAPE_MISMATCH') ? 'records did not fit the declared fields: the config must be fixed (see the reason), a narrower request does not help' : null,
  ].filter((c) => c !== null)
  return `no continuation is available: do not invent one; ${clauses.length > 0 ? `${clauses.join('; ')}; otherwise ` : ''}report the result as partial`
}

/**
 * What the agent can do to finish, in one clause: the continuation as given, never an invented one. The cursor is
 * named as the answer's `continuation.cursor`: a client on an older protocol has no structuredContent, only the
 * answer's JSON text, which holds it too.
 */
export function continuationHint(continuation: Continuation | null | undefined, reasons: readonly IncompleteReason[] = []): string {
  if (!continuation) return noContinuationHint(reasons)
  switch (continuation.kind) {
    case 'next_cursor':
      return 'continue with the answer\'s continuation.cursor, passed back unchanged as `cursor`'
    case 'retry_after':
      return `wait ${continuation.retry_after_seconds}s (not before ${continuation.not_before}), then continue${continuation.cursor ? " with the answer's continuation.cursor" : ''}`
    case 'narrow_query':
      return `narrow the query: ${revealed(continuation.message)}`
    case 'retry_with_deadline':
      return `retry with budget.deadline_ms of at least ${continuation.minimum_deadline_ms}${continuation.cursor ? ", with the answer's continuation.cursor" : ''}`
  }
}

export function warningsClause(warnings: readonly Warning[] | undefined): string {
  if (!warnings || warnings.length === 0) return ''
  return ` Warnings (they do not change completeness): ${warnings.map((w) => (w.source ? `${w.code} (${named(w.source)})` : w.code)).join(', ')}.`
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** Groups (and words) the summary lists; the rest are counted and left to `lookalike_ids`. */
const LOOKALIKES_SAID = 5

/**
 * A record's or the agent's text quoted for a sentence the agent relays to its person, spelled as the review pages
 * spell it (`revealed`): JSON quoting alone left a zero-width space or a right-to-left override raw, so "zz" and "zz"
 * plus U+200B were quoted alike in the sentence warning they are two records.
 */
export const quoted = (text: string) => JSON.stringify(revealed(text))

/**
 * A name in a sentence (a source, a rule, a principal): bare when it is a plain ASCII token ("shard-2", "alice"),
 * else `quoted`. A source an upstream names ("x); COMPLETE (") or a principal's name with a line break in it would
 * otherwise read as the summary's own words.
 */
export const named = (text: string) => (/^[\w.:@/-]+$/.test(text) ? text : quoted(text))

/** A value quoted, then the code points where it differs from the others it is drawn like. */
const spelled = (value: string, codePoints: readonly string[]) => `${quoted(value)} (${codePoints.length === 0 ? 'no character apart' : codePoints.join(' ')})`

/**
 * The view's `lookalike_ids` in a sentence or two, as the review pages and the CLI say them: the agent relays them to
 * the person before asking for an approval. '' for ordinary ids.
 */
export function lookalikeClause(lookalikes: SelectionLookalikes | LookalikeIds): string {
  const { groups, more_groups } = lookalikes
  let said = ''
  if (groups.length > 0) {
    const rest = groups.length - Math.min(groups.length, LOOKALIKES_SAID) + more_groups
    const listed = groups.slice(0, LOOKALIKES_SAID).map((ids) => ids.map(({ id, code_points }) => spelled(id, code_points)).join(' and '))
    said += ` LOOK-ALIKE IDS: ${plural(groups.length + more_groups, 'group')} of different records whose ids are drawn alike: ${listed.join('; ')}${rest > 0 ? `; and ${rest} more (lookalike_ids)` : ''}. Tell the person each is a separate record before asking for any approval.`
  }
  if ('named' in lookalikes && lookalikes.named.length > 0) {
    const { named, more_named } = lookalikes
    const rest = named.length - Math.min(named.length, LOOKALIKES_SAID) + more_named
    const listed = named.slice(0, LOOKALIKES_SAID).map((n) => `${spelled(n.word, n.word_code_points)} looks like the record id ${spelled(n.id, n.id_code_points)}`)
    said += ` LOOK-ALIKE IDS in the agent's words: ${listed.join('; ')}${rest > 0 ? `; and ${rest} more (lookalike_ids.named)` : ''}: the record changed is the id, not the word.`
  }
  return said
}

/**
 * A collection's summary: completeness first, then what came back and what it proves.
 *
 * @example "INCOMPLETE (CLIENT_LIMIT_REACHED: max_pages=1): 100 records returned, more may exist; continue with the answer's continuation.cursor, passed back unchanged as `cursor`."
 */
export function collectionSummary(value: Completeness, returned: number, where: string, noun = 'record', walkReturned?: number): string {
  // A continued walk: this part's count alone would misstate what the walk found (an empty last part proves nothing alone).
  if (walkReturned !== undefined) {
    const label = completenessLabel(value)
    const part = `this call returned ${plural(returned, noun)}; the whole walk has returned ${plural(walkReturned, noun)} from ${where}`
    if (value.complete) return `${label}: ${part}; ${completeProof(value, walkReturned)}.${warningsClause(value.warnings)}`
    return `${label}: ${part}, more may exist; ${continuationHint(value.continuation, value.incomplete_reasons)}. Show these reasons to the person before asking for any approval based on this result.${warningsClause(value.warnings)}`
  }
  const label = completenessLabel(value)
  if (value.complete) {
    return `${label}: ${plural(returned, noun)} in ${where}; ${completeProof(value, returned)}.${warningsClause(value.warnings)}`
  }
  const proof = returned === 0 ? 'this empty result does NOT prove there are none' : 'more may exist'
  return `${label}: ${plural(returned, noun)} returned from ${where}, ${proof}; ${continuationHint(value.continuation, value.incomplete_reasons)}. Show these reasons to the person before asking for any approval based on this result.${warningsClause(value.warnings)}`
}

export { plural }
