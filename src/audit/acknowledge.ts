import { WarrantError, type Actor } from '../contract/index.js'
import type { AuditEventRow, Store } from '../store/index.js'
import { ACKNOWLEDGE_ACTION, parseAcknowledgement, rowDigest, type AcknowledgedBreak, type AcknowledgementDetails } from './acknowledged-breaks.js'
import { appendAcknowledgement } from './append.js'
import { checkRowHash, signingKeyId, storedRow } from './chain.js'
import { runRow } from './events.js'
import { AUDIT_KEY_ENV, type AuditKeyring } from './keyring.js'
import { alteredSignedEnd, checkHead, headOf, readStoredHead, unreadableHeadMessage, unsignedHeadOverSignedRows, type StoredHead } from './head.js'
import type { ChainProblem, VerifyResult } from './verify.js'

/**
 * The break at a signed chain's end that an append would seal, as verify words it: a head missing or not signed with
 * the key (rows cut from the end, the head removed or rewritten to hide it). Null when the end would stay visible.
 */
function sealableEnd(stored: StoredHead, lastRow: AuditEventRow | undefined, keyring: AuditKeyring): { seq: number; problem: ChainProblem; message: string } | null {
  const head = headOf(stored)
  const last = lastRow && { seq: Number(lastRow.seq), hash: lastRow.hash }
  const headless = unsignedHeadOverSignedRows(stored, last)
  if (head === null) {
    if (headless === null || !last) return null
    // a head stored but unreadable was overwritten, not removed: worded as verify words it
    const message = stored.state === 'unreadable' ? unreadableHeadMessage(stored, last.seq) : `the chain head is missing, so the end of the log cannot be confirmed: rows after ${last.seq} may have been removed`
    return { seq: last.seq + 1, problem: 'removed', message }
  }
  if (headless === null && checkHead(head, keyring) !== 'mismatch') {
    // an altered last row (its head intact): an acknowledgement chained onto it would lift start's refusal
    const altered = alteredSignedEnd(lastRow, keyring)
    return altered === null ? null : { seq: last!.seq, problem: 'altered', message: altered }
  }
  const lastSeq = last?.seq ?? 0
  if (head.seq > lastSeq) return { seq: lastSeq + 1, problem: 'removed', message: `rows ${lastSeq + 1}..${head.seq} are missing from the end of the log (the last append recorded seq ${head.seq})` }
  return { seq: lastSeq, problem: 'forged', message: `the chain head (seq ${head.seq}) is not signed with the audit key: it was moved by someone without the key` }
}

/**
 * The signing key must verify rows the chain signed with its id (others than the bad one), else it is the key that is
 * in doubt (a key file written anew under the same id): an acknowledgement signed with it would let `serve` start and
 * sign with a key the chain's rows do not verify. `verify` calls that `unverifiable` only where the head still vouches.
 */
async function assertKeyVerifiesChain(store: Store, keyring: AuditKeyring, badSeq: number): Promise<void> {
  const id = keyring.current.id
  const signed = await store.db.selectFrom('audit_events').selectAll().where('hash', 'like', `hmac-sha256:${id}:%`).where('seq', '<>', badSeq).orderBy('seq').limit(8).execute()
  if (signed.length === 0 || signed.some((r) => signingKeyId(r.hash) === id && checkRowHash(storedRow(r), keyring) === 'ok')) return
  throw new WarrantError(
    'conflict',
    `the configured audit key "${id}" verifies none of the rows the chain signed with that id (from seq ${signed[0]!.seq}): it is not the key that signed this chain (a key file written anew?). Configure the key that signed it, then verify again; nothing was written`,
    { key_id: id, seq: Number(signed[0]!.seq) },
  )
}

function lastRow(store: Store): Promise<AuditEventRow | undefined> {
  return store.db.selectFrom('audit_events').selectAll().orderBy('seq', 'desc').limit(1).executeTakeFirst()
}

export interface AcknowledgeRequest {
  /** the first bad seq, exactly as `verify` reports it */
  readonly at: number
  readonly reason: string
  readonly actor: Actor | null
}

/**
 * Puts a broken chain back into service without hiding the break: appends one signed row recording what `verify`
 * found (the first bad seq, its problem and message, the row stored there and the chain's end as found), the
 * operator's reason and who ran it, and continues the chain from it. `verify` reports the break from then on
 * (`ok_with_acknowledged_breaks`, never `ok`) and checks every row around it, so a later break is still the first bad
 * row; each needs its own acknowledgement. Refused, nothing written: without a key (an unsigned acknowledgement is
 * anyone's word), with no reason, on a chain that verifies, at any seq but the first bad one (named), and for an
 * `unverifiable` chain (the key is in doubt: signing with it would prove nothing).
 */
export async function acknowledgeBreak(
  store: Store,
  keyring: AuditKeyring | null,
  verify: () => Promise<VerifyResult>,
  now: () => string,
  request: AcknowledgeRequest,
): Promise<AcknowledgedBreak> {
  if (keyring === null)
    throw new WarrantError('invalid_request', `no audit key is configured (audit.key or ${AUDIT_KEY_ENV}): an acknowledgement is signed with the key that signs the chain, and an unsigned one would be anyone's word`)
  const reason = request.reason.trim()
  if (reason === '') throw new WarrantError('invalid_request', 'give a reason (--reason): what happened and why the gateway may go back into service; it is kept in the signed acknowledgement')
  const found = await verify()
  if (found.status !== 'broken')
    throw new WarrantError(
      'conflict',
      `the audit chain has no unacknowledged break (verify: ${found.status}): there is nothing to acknowledge, and nothing was written`,
      { status: found.status },
    )
  await assertKeyVerifiesChain(store, keyring, found.first_bad_seq)
  // The walk stops at its first bad row; a chain whose end is broken too (its head missing or not signed with the key)
  // would be sealed by the acknowledgement appended after it, that break never said again. Its end goes first.
  const end = sealableEnd(await readStoredHead(store.db), await lastRow(store), keyring)
  const named = end !== null && end.seq !== found.first_bad_seq ? end : { seq: found.first_bad_seq, problem: found.problem, message: found.message }
  const { seq, problem, message } = named
  if (end !== null && named === end && request.at !== seq)
    throw new WarrantError(
      'invalid_request',
      `verify reports seq ${found.first_bad_seq} (${found.problem}) first, but the chain's end is broken too (seq ${end.seq}, ${end.problem}: ${end.message}), and an acknowledgement appended now would seal it: acknowledge the end first (--at ${end.seq}), then seq ${found.first_bad_seq}`,
      { at: request.at, first_bad_seq: found.first_bad_seq, end_seq: end.seq },
    )
  if (request.at !== seq)
    throw new WarrantError(
      'invalid_request',
      `--at ${request.at} is not the chain's first bad row: verify reports seq ${seq} (${problem}: ${message}). Acknowledge that one; each later break needs its own acknowledgement`,
      { at: request.at, first_bad_seq: seq, problem },
    )
  if (problem === 'unverifiable')
    throw new WarrantError(
      'conflict',
      `seq ${seq} is unverifiable with the configured audit key (${message}): the key is in doubt, not the chain. Configure the key that signed it and verify again; nothing was written`,
      { first_bad_seq: seq, problem },
    )
  const row = await store.db.selectFrom('audit_events').selectAll().where('seq', '=', seq).executeTakeFirst()
  const before = await store.db.selectFrom('audit_events').select('seq').where('seq', '<', seq).orderBy('seq', 'desc').limit(1).executeTakeFirst()
  const appended = await appendAcknowledgement(store, keyring, ({ head, head_unreadable, last }) => {
    const details: AcknowledgementDetails = {
      break: { seq, problem, message, stored_hash: row?.hash ?? null, row_digest: rowDigest(row), prev_seq_found: before ? Number(before.seq) : null, head_found: head, ...(head_unreadable !== undefined ? { head_unreadable } : {}), last_found: last },
      reason,
    }
    return runRow({ actor: request.actor, action: ACKNOWLEDGE_ACTION, summary: { seq, problem }, details: { ...details } }, now)
  })
  const acknowledged = parseAcknowledgement(appended)
  if (!acknowledged) throw new WarrantError('internal', `the acknowledgement appended at seq ${appended.seq} does not read back as one`)
  return acknowledged
}
