import type { Kysely } from 'kysely'
import { canonicalJson, sha256 } from '../contract/index.js'
import type { AuditEventRow, Database } from '../store/index.js'
import { checkRowHash, signingKeyId, storedRow } from './chain.js'
import { parseJson } from './entry.js'
import { headOf, parseChainHead, type ChainHead } from './head.js'
import type { AuditKeyring } from './keyring.js'
import type { ChainProblem } from './verify.js'

/** The action of the row `warrant audit acknowledge` appends. */
export const ACKNOWLEDGE_ACTION = 'audit acknowledge'

/**
 * A break of the chain an operator holding the audit key acknowledged: what `verify` reported (the first bad seq
 * and its problem, in its words), the row stored at that seq and the chain's end as found when it was acknowledged,
 * why, and who. Kept in the signed acknowledgement row, so `verify` and every export report it for good.
 */
export interface AcknowledgedBreak {
  readonly seq: number
  readonly problem: ChainProblem
  readonly message: string
  /** the hash stored on the row at `seq` when acknowledged (null: no row was stored there) */
  readonly stored_hash: string | null
  /** sha256 of that row as stored, every column: a row changed again after its acknowledgement is a new break */
  readonly row_digest: string | null
  /** the seq of the row stored before it, as found (null: none): an acknowledged gap is that gap, never a wider one */
  readonly prev_seq_found: number | null
  /** the chain head and the last row as the acknowledgement's append found them (the head may be missing) */
  readonly head_found: ChainHead | null
  /** the text stored as the head when it did not read as one (head_found is then null); absent when the head was missing or read */
  readonly head_unreadable?: string
  readonly last_found: { readonly seq: number; readonly hash: string } | null
  readonly reason: string
  /** the acknowledgement row */
  readonly acknowledged_at_seq: number
  readonly at: string
  readonly principal: string | null
  readonly by: string | null
}

/** The digest an acknowledgement binds its row with (null where no row is stored). */
export function rowDigest(row: AuditEventRow | undefined): string | null {
  return row ? sha256(canonicalJson(storedRow(row))) : null
}

/** What the details of an acknowledgement row hold, besides the actor the run row adds. */
export type AcknowledgementDetails = { readonly break: Omit<AcknowledgedBreak, 'reason' | 'acknowledged_at_seq' | 'at' | 'principal' | 'by'>; readonly reason: string }

/** An acknowledgement row read back; null when the row is none (or its details are not one's). */
export function parseAcknowledgement(row: AuditEventRow): AcknowledgedBreak | null {
  if (row.action !== ACKNOWLEDGE_ACTION || row.details === null) return null
  const details = parseJson(row.details) as Partial<AcknowledgementDetails & { actor: { name?: unknown } }> | string
  if (typeof details !== 'object' || details === null || typeof details.reason !== 'string') return null
  const b = details.break as Record<string, unknown> | undefined
  if (!b || !Number.isSafeInteger(b.seq) || typeof b.problem !== 'string' || typeof b.message !== 'string') return null
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  const last = b.last_found as { seq?: unknown; hash?: unknown } | null | undefined
  return {
    seq: b.seq as number,
    // a signed row: its problem is one verify wrote
    problem: b.problem as ChainProblem,
    message: b.message,
    stored_hash: text(b.stored_hash),
    row_digest: text(b.row_digest),
    prev_seq_found: Number.isSafeInteger(b.prev_seq_found) ? (b.prev_seq_found as number) : null,
    head_found: b.head_found ? headOf(parseChainHead(JSON.stringify(b.head_found))) : null,
    ...(typeof b.head_unreadable === 'string' ? { head_unreadable: b.head_unreadable } : {}),
    last_found: last && Number.isSafeInteger(last.seq) && typeof last.hash === 'string' ? { seq: last.seq as number, hash: last.hash } : null,
    reason: details.reason,
    acknowledged_at_seq: Number(row.seq),
    at: row.at,
    principal: row.principal,
    by: text(details.actor?.name),
  }
}

/**
 * A row written past the head is `inserted` until an acknowledgement's append moves the head over it; from then on the
 * walk calls the same row (bound by its digest) by what is wrong with it: not signed (`forged`) or not matching its hash.
 */
function sameProblem(acknowledged: string, found: string): boolean {
  return acknowledged === found || (acknowledged === 'inserted' && (found === 'forged' || found === 'altered'))
}

/** Whether a break verify found is acknowledged: `passed`, `changed` (its row differs from the one acknowledged), or `none`. */
export type AcknowledgementMatch = 'passed' | 'changed' | 'none'

export interface Acknowledgements {
  /**
   * Whether a break at `seq` with `problem` is acknowledged by a signed acknowledgement at or after it; a `removed` one
   * only where the gap starts after the same row (`prevSeq`, the walk's last good row) as when acknowledged.
   */
  match(seq: number, problem: string, prevSeq?: number | null): Promise<AcknowledgementMatch>
  /** The acknowledgement a row of the chain is, when it is an authentic one. */
  at(seq: number): AcknowledgedBreak | undefined
}

/**
 * The chain's acknowledgements: rows of the action whose hash is signed and verifies with the keyring (an unsigned
 * or forged one is nobody's acknowledgement, and stays whatever break verify finds it to be). Read once, before the
 * walk: a break is met before the acknowledgement that follows it. `verify` still checks each as a row of the
 * chain when it reaches it, so one removed or moved takes its break back with it.
 */
export async function readAcknowledgements(db: Kysely<Database>, keyring: AuditKeyring | null): Promise<Acknowledgements> {
  const bySeq = new Map<number, AcknowledgedBreak>()
  if (keyring !== null)
    for (const row of await db.selectFrom('audit_events').selectAll().where('action', '=', ACKNOWLEDGE_ACTION).orderBy('seq').execute()) {
      if (signingKeyId(row.hash) === null || checkRowHash(storedRow(row), keyring) !== 'ok') continue
      const parsed = parseAcknowledgement(row)
      if (parsed) bySeq.set(parsed.acknowledged_at_seq, parsed)
    }
  const all = [...bySeq.values()]
  return {
    async match(seq, problem, prevSeq = null) {
      const named = all.filter((a) => a.seq === seq && sameProblem(a.problem, problem) && a.acknowledged_at_seq >= seq && (problem !== 'removed' || a.prev_seq_found === prevSeq))
      if (named.length === 0) return 'none'
      const stored = await db.selectFrom('audit_events').selectAll().where('seq', '=', seq).executeTakeFirst()
      const digest = rowDigest(stored)
      return named.some((a) => a.row_digest === digest) ? 'passed' : 'changed'
    },
    at: (seq) => bySeq.get(seq),
  }
}
