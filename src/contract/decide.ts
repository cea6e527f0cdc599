import type { Decision, ReasonCode, Use } from './codes.js'
import type { Envelope } from './envelope.js'

/** What `decide()` answers: the decision, the sentence that justifies it, and the codes it rested on. */
export interface Verdict {
  readonly decision: Decision
  readonly reason: string
  readonly codes: readonly ReasonCode[]
}

type Judged = Pick<Envelope<unknown>, 'complete' | 'items' | 'incomplete_reasons' | 'continuation' | 'warnings'> & {
  /** Without a scope (an older producer), a complete result is taken at its word about its snapshot. */
  readonly scope?: Pick<Envelope<unknown>['scope'], 'consistent_snapshot' | 'stability'>
}

/**
 * Reasons no retry by this principal can fix: the gap is structural. A shape mismatch is the config not
 * matching the upstream: reading on or again finds the same unjudgeable records.
 */
const STRUCTURAL: ReadonlySet<ReasonCode> = new Set<ReasonCode>(['VISIBILITY_RESTRICTED', 'SHAPE_MISMATCH'])
/** Reasons that mean the attempt must start again (later), never be merged with the earlier one. */
const RESTART: ReadonlySet<ReasonCode> = new Set<ReasonCode>(['CURSOR_EXPIRED', 'SNAPSHOT_INVALIDATED'])
/** Reasons that clear with time. */
const TRANSIENT: ReadonlySet<ReasonCode> = new Set<ReasonCode>(['RATE_LIMITED', 'SOURCE_UNAVAILABLE'])

/**
 * The rule agents and tools share. An empty `complete` result proves absence, but only when the walk read one
 * consistent snapshot or proved itself that the data held still (`scope.stability`); a partial one may feed a
 * report or a read-only investigation, must show its reasons before any approval, and never authorises a change
 * based on absence.
 *
 * For proving absence from a partial result, in this order: a restricted visibility or a permanent source
 * failure (`SOURCE_UNAVAILABLE` without `retry_after_seconds`) refuses, since no retry can fill that gap; an
 * expired cursor or moved data means a new attempt later, whatever else the envelope offers (an expired part is
 * never merged into a continued walk); a `retry_after` continuation means wait; any other continuation means
 * follow it; a transient failure without one means try again later; anything else refuses.
 *
 * @example
 * decide(envelope, 'change_from_absence')
 * // { decision: 'refuse_or_request_review', reason: 'partial result (MORE_PAGES_AVAILABLE) …', codes: [...] }
 */
export function decide(envelope: Judged, use: Use): Verdict {
  const codes = envelope.incomplete_reasons.map((r) => r.code)
  const listed = codes.join(', ') || 'no reason given'

  // A producer that says `complete: true` and also lists reasons contradicts itself (the envelope schema
  // refuses it); the reasons win, so a malformed response can never authorise a change.
  if (envelope.complete === true && codes.length === 0) {
    const stale = envelope.warnings.find((w) => w.code === 'STALE_INDEX')
    if (stale && (use === 'change_from_absence' || use === 'change_from_presence'))
      return verdict('refuse_or_request_review', `complete, but STALE_INDEX: ${stale.message}; a change needs live state`, codes)
    if (use === 'prove_absence' || use === 'change_from_absence') {
      if (!heldStill(envelope))
        return verdict(
          'refuse_or_request_review',
          'complete, but read without a consistent snapshot and the walk could not prove the data held still (scope.stability is not "proven"): a record may have moved past the walk unseen, so absence is not proven',
          codes,
        )
      return verdict(
        'proceed',
        envelope.items.length === 0 ? 'complete and empty: absence is proven for the declared scope' : 'complete: the whole scope was examined',
        codes,
      )
    }
    return verdict('proceed', 'complete: the whole scope was examined', codes)
  }

  switch (use) {
    case 'report':
      return verdict('proceed', `partial result may feed a report that shows its reasons (${listed})`, codes)
    case 'investigate':
      return verdict('proceed', `partial result may feed a bounded read-only investigation (${listed})`, codes)
    case 'change_from_absence':
      return verdict('refuse_or_request_review', `partial result (${listed}) never authorises a change based on absence`, codes)
    case 'change_from_presence':
      return verdict(
        'refuse_or_request_review',
        `partial result (${listed}): the returned records may be changed only after a reviewer sees these reasons`,
        codes,
      )
    case 'prove_absence':
      return recover(envelope, codes, listed)
  }
}

/**
 * Whether a complete walk may speak for absence: it read one consistent snapshot, or proved itself that the data held
 * still (`scope.stability: "proven"`). Without a scope (an older producer) it is taken at its word.
 */
export function heldStill(envelope: Pick<Judged, 'scope'>): boolean {
  if (!envelope.scope) return true
  return envelope.scope.consistent_snapshot || envelope.scope.stability === 'proven'
}

/** For a question that needs the whole scope: how to get the rest, if it can be had. */
function recover(envelope: Judged, codes: readonly ReasonCode[], listed: string): Verdict {
  const structural = codes.filter((c) => STRUCTURAL.has(c))
  if (structural.length > 0)
    return verdict(
      'refuse_or_request_review',
      structural.includes('SHAPE_MISMATCH')
        ? `${structural.join(', ')}: records in scope could not be judged against the declared fields; fix the config, absence cannot be proven`
        : `${structural.join(', ')}: part of the scope cannot be seen by this credential`,
      codes,
    )
  const permanent = envelope.incomplete_reasons.filter((r) => r.code === 'SOURCE_UNAVAILABLE' && r.retry_after_seconds === undefined)
  if (permanent.length > 0)
    return verdict(
      'refuse_or_request_review',
      `SOURCE_UNAVAILABLE: ${permanent.map((r) => r.source ?? 'a source').join(', ')} failed in a way no retry of the same request can fix; absence cannot be proven (${listed})`,
      codes,
    )
  const restart = codes.filter((c) => RESTART.has(c))
  if (restart.length > 0)
    return verdict('retry_later', `${restart.join(', ')}: this attempt cannot be completed; start a new walk later, never merged with this one (${listed})`, codes)
  const kind = envelope.continuation?.kind
  if (kind === 'retry_after') return verdict('retry_later', `${listed}: wait until not_before, then resume with the given cursor`, codes)
  if (kind === 'next_cursor' || kind === 'retry_with_deadline' || kind === 'narrow_query')
    return verdict('continue_search', `${listed}: the search is not finished; follow the ${kind} continuation`, codes)
  if (codes.some((c) => TRANSIENT.has(c)))
    return verdict('retry_later', `${listed}: start a new attempt later; never merge it with this one`, codes)
  return verdict('refuse_or_request_review', `${listed} with no way to continue: absence cannot be proven`, codes)
}

function verdict(decision: Decision, reason: string, codes: readonly ReasonCode[]): Verdict {
  return { decision, reason, codes }
}
