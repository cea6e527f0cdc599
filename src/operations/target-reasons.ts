import type { OperationTargetRow } from '../store/index.js'
import { INTERRUPTED_REASON, RATE_LIMITED_HALTED, rateLimitedWriteSent } from './ledger.js'
import { NOT_APPLIED } from './reconcile.js'
import { waitWords, type RateLimitKind } from './wait-words.js'

/**
 * Every reason the ledger records on a target, in words: each surface (the HTTP API's `reason_text`, the MCP
 * tools' text, `warrant operation results`, the review page) shows these beside the code, so a reviewer tells
 * "refused by the upstream" from "never sent" from "sent and rolled back" without knowing the codes. Each says
 * whether anything was written; the target's own error says what happened to it. The reasons of a "not now" answer
 * (`rate_limited`, `rate_limited_halted`, `rate_limited_applied`) are not here: their words depend on what the
 * operation's waits are (wait-words.ts `reasons`), a 429 on an http resource, a lock refused on a sql one.
 */
const MEANINGS: Readonly<Record<string, string>> = {
  // failed
  rejected: 'refused: the upstream judged this write and said no, or a database write read back before COMMIT was not as approved and was rolled back; nothing was written',
  unauthorized: "refused by the upstream: the gateway's credential may not make this write; nothing was written (the operation halts)",
  not_sent: 'never sent: the upstream could not be reached, so the write never left the gateway; nothing was written',
  rolled_back: 'sent, then rolled back: the database received the write but never committed it; nothing was written',
  write_refused: 'refused by the gateway before sending: the write could not be made as approved; nothing was sent',
  reread_failed: 'not sent: the record could not be read again before its write; nothing was written',
  effect_contradicted: 'written, but the record holds something other than the approved change (the operation halts)',
  [NOT_APPLIED]: 'reconciliation read the record still at the version the selection froze: the write did not happen',
  // unknown
  upstream_unknown: 'no answer: the write may or may not have happened; reconcile before anything is retried',
  effect_unverified: 'the upstream took the write, but its effect could not be checked: it may or may not hold',
  effect_pending: 'the upstream took the write to apply later: reconcile once it has',
  [INTERRUPTED_REASON]: 'the executor stopped between sending and recording the answer: the write may or may not have happened',
  reconcile_unreadable: 'reconciliation could not read the record: whether the write happened is still not known',
  reconcile_missing: 'reconciliation found no such record: whether the write happened cannot be told',
  reconcile_inconclusive: 'reconciliation found the record changed, but not to the approved change: not known',
  reconcile_settling: 'too soon to conclude: the upstream may still apply the write; reconcile again later',
  // skipped
  missing: 'skipped: the record no longer exists upstream; nothing was written',
  version_changed: 'skipped: the record changed after the selection froze it; nothing was written',
  precondition_failed: "skipped: the record no longer meets the action's precondition; nothing was written",
  // succeeded
  reconciled: 'reconciliation read the record: it holds the approved change',
  applied_late: 'judged not applied earlier; read again, it now holds the approved change',
  unexpected_status: 'the upstream answered a status the action does not expect; read again, the record holds the approved change (the operation halts)',
  other_record_answer: 'the upstream answered with another record than the target; read again, the target holds the approved change (the operation halts)',
}

/**
 * How far "each 429 was waited out and asked again" holds, for the surfaces that sum an operation's 429s: all of
 * them, unless it halted, where a target answered 429 on its last turn was never asked again.
 */
export function askedAgainText(op: { readonly state: string }): string {
  return op.state === 'halted' ? 'asked again until the operation halted: a target answered so on its last turn was not (pending, or unknown where its write was sent: reconcile it)' : 'asked again'
}

/**
 * A target's reason in words, as `reasonText`, told apart where a pending target's write was sent and answered "not
 * now" (`rateLimitedWriteSent`). `kind`: the operation's `rate_limit_kind`, which says what those answers were.
 */
export function targetReasonText(row: Pick<OperationTargetRow, 'state' | 'reason' | 'error'>, kind: RateLimitKind | null): string | null {
  return row.state === 'pending' && rateLimitedWriteSent(row) ? waitWords(kind).reasons.writeWaiting : reasonText(row.reason, kind)
}

/**
 * The reason in words; null for no reason, and the code itself said to be unexplained for one not listed. The reasons
 * of a "not now" answer are said in the operation's terms (`kind`: a 429 on an http resource, a lock on a sql one).
 */
export function reasonText(reason: string | null, kind: RateLimitKind | null): string | null {
  if (reason === null) return null
  const waits = waitWords(kind).reasons
  if (reason === 'rate_limited') return waits.waiting
  if (reason === RATE_LIMITED_HALTED) return waits.halted
  if (reason === 'rate_limited_applied') return waits.applied
  return MEANINGS[reason] ?? `reason "${reason}" (no explanation recorded for it; see the error)`
}

/**
 * What a target's `before` is when nothing was written: a skip's was read at write time (null when the record was
 * gone); a pending target's is the values as frozen, as no attempt read it yet. A failed or unknown one's may be
 * either (a target whose executor stopped mid-write keeps the frozen values), so its label claims no read.
 * @example beforeLabel('skipped') // 'read at write time'
 */
export function beforeLabel(outcome: string): string {
  if (outcome === 'skipped') return 'read at write time'
  if (outcome === 'pending') return 'as frozen'
  return 'before'
}
