import type { Kysely, QueryCreator } from 'kysely'
import type { Database } from '../store/index.js'
import type { AuditEventRow } from '../store/index.js'
import { AUDIT_GENESIS_HASH, checkRowHash, signingKeyId, storedRow } from './chain.js'
import { AUDIT_KEY_ENV, hmacHex, sameHex, type AuditKey, type AuditKeyring } from './keyring.js'

/**
 * The chain head: the seq and hash of the last row the audit log appended, kept in the `kv` table and
 * updated in the same transaction as each append. It lets `verify` see rows removed from the end of the
 * log (which leave a shorter but otherwise valid chain) and rows written past it by something else, and it
 * is where the next append continues from, so a truncated end stays visible as a gap.
 */
export const CHAIN_HEAD_KEY = 'audit_chain_head'

export interface ChainHead {
  readonly seq: number
  readonly hash: string
  /** with a key: which key signed the head, and the signature (so the head cannot be moved back without it) */
  readonly key_id?: string
  readonly mac?: string
}

/** The head's signature: binds its seq to its hash under the key. */
export function signHead(head: { seq: number; hash: string }, key: AuditKey): ChainHead {
  return { seq: head.seq, hash: head.hash, key_id: key.id, mac: hmacHex(key, `warrant-audit-head:${head.seq}:${head.hash}`) }
}

/** 'ok', 'unsigned', 'unknown_key' or 'mismatch' (the head was written by someone without the key). */
export function checkHead(head: ChainHead, keyring: AuditKeyring | null): 'ok' | 'unsigned' | 'unknown_key' | 'mismatch' {
  if (head.mac === undefined || head.key_id === undefined) return 'unsigned'
  const key = keyring?.get(head.key_id)
  if (!key) return 'unknown_key'
  return sameHex(signHead(head, key).mac!, head.mac) ? 'ok' : 'mismatch'
}

/**
 * Where the next append continues from: the head when it is ahead of the last row (rows removed from the end
 * stay a visible gap), else the last row, else nothing (`seq` 0, the genesis hash).
 */
export function chainTip(head: ChainHead | null, last: { seq: number; hash: string } | undefined): ChainHead {
  return head && (!last || head.seq >= last.seq) ? head : (last ?? { seq: 0, hash: AUDIT_GENESIS_HASH })
}

/**
 * Why a chain may not be continued, or null: its last row is signed but its head is missing, unreadable or unsigned.
 * Every signed append writes a signed head with its rows, so such a head was removed, overwritten or replaced by
 * someone without the key, typically to hide rows cut from the end; an append continuing from the last row would write
 * a new signed head over that evidence, and the chain would verify again. Said by the append (nothing written) and at
 * start. Takes the head as stored (`readStoredHead`): one stored but unreadable is named so, as verify names it.
 */
export function unsignedHeadOverSignedRows(stored: StoredHead, last: { seq: number; hash: string } | undefined): { message: string; head: 'missing' | 'unreadable' | 'unsigned' } | null {
  const head = headOf(stored)
  if (!last || signingKeyId(last.hash) === null || (head !== null && head.mac !== undefined && head.key_id !== undefined)) return null
  const state = stored.state === 'readable' ? 'unsigned' : stored.state === 'absent' ? 'missing' : 'unreadable'
  const is = stored.state === 'unreadable' ? `stored but unreadable (${unreadableWhy(stored)})` : state === 'missing' ? 'missing' : 'not signed'
  const how = state === 'unreadable' ? 'overwritten' : 'removed or replaced'
  // the seq acknowledge takes for this end, as verify and acknowledge name it: the row after the last one, or the last
  // row itself where an unsigned head claims it (a head moved back onto it)
  const at = head !== null && head.seq <= last.seq ? last.seq : last.seq + 1
  return {
    head: state,
    message: `the store's audit chain is signed up to row ${last.seq}, but its head is ${is}: every signed append writes a signed head, so it was ${how} by someone without the audit key, e.g. to hide rows cut from the end. Nothing was appended (a new head would be written over that evidence); run \`warrant audit verify\`, and restore the audit rows and head from a backup of the store, or, without one, record the break with \`warrant audit acknowledge --at ${at} --reason …\` (verify keeps reporting it)`,
  }
}

/**
 * Why a process may not continue a chain whose tip is unsigned, or null. `unsignedHeadOverSignedRows` looks at the
 * last row alone, so rows inserted unsigned after the last signed one (by someone without the key, with or without an
 * unsigned head moved onto them) passed it: a keyed append signed on top of them and took them into the chain, and a
 * keyless one (refused on a signed tip only) extended them. The last signed row is found from the end by the primary
 * key, among rows after `after` (what the process already read unsigned: a keyless process reads only rows new since
 * its last append, see append.ts). A keyed process reads it only when it meets an unsigned tip (once per store where a
 * key is newly configured on an unsigned chain; never on a signed one).
 *
 * With no signed row at all, the keyring is the one witness left outside the store: a retired key (a later line of the
 * key) is kept because rows were signed with it before a rotation, so a keyring holding one over a chain with no signed
 * row says the signed rows were cut back to the rows written before a key was configured. With a single key nothing
 * in the store or the keyring can tell that cut from a key configured just now: only a checkpoint kept outside the
 * store shows it (verify says so in its statement). `keySetting` names, to a keyless process, where the key is set.
 */
export async function unsignedTipRefusal(
  db: Kysely<Database>,
  tipSeq: number,
  keyring: AuditKeyring | null,
  options: { readonly after?: number; readonly keySetting?: string } = {},
): Promise<{ message: string; details: Record<string, unknown> } | null> {
  const after = options.after ?? 0
  if (tipSeq <= after) return null
  const signed = await db.selectFrom('audit_events').select('seq').where('hash', 'like', 'hmac-sha256:%').where('seq', '>', after).orderBy('seq', 'desc').limit(1).executeTakeFirst()
  if (signed) {
    const from = Number(signed.seq) + 1
    const rows = from === tipSeq ? `row ${tipSeq} is` : `rows ${from}..${tipSeq} are`
    const keyless = keyring === null ? `, and no audit key is configured in this process` : ''
    const onTop = keyring === null ? 'an unsigned row on top would extend them' : 'a signed row on top would take them into the chain'
    const configure = keyring === null ? `configure the key (${options.keySetting ?? `audit.key or ${AUDIT_KEY_ENV}`}) as the gateway that signs the chain does, ` : ''
    return {
      message: `the store's audit chain is signed up to row ${signed.seq}, but ${rows} not signed${keyless}: every row after a signed one is signed, so these were written by someone without the audit key. Nothing was appended (${onTop}); ${configure}run \`warrant audit verify\`, and restore the audit rows and head from a backup of the store, or, without one, record the break with \`warrant audit acknowledge --at ${from} --reason …\` (verify keeps reporting it)`,
      details: { seq: from, last_signed_seq: Number(signed.seq), problem: 'unsigned_rows', ...(keyring === null ? { key: 'missing' } : {}) },
    }
  }
  if (keyring === null) return null
  const retired = keyring.ids.filter((id) => id !== keyring.current.id)
  if (retired.length === 0) return null
  return {
    message: `the configured audit key holds retired key${retired.length > 1 ? 's' : ''} ${retired.map((id) => `"${id}"`).join(', ')} (kept to verify rows signed before a rotation), but no row of the store's audit chain (rows 1..${tipSeq}) is signed: the signed rows appear to have been cut back to the rows written before a key was configured. Nothing was appended (a signed row on top would make the cut chain verify); run \`warrant audit verify --checkpoint FILE\` against a checkpoint taken earlier, and restore the audit rows from a backup of the store. If ${retired.length > 1 ? 'those keys' : 'that key'} never signed this store, remove ${retired.length > 1 ? 'their lines' : 'its line'} from the key`,
    details: { seq: tipSeq, retired_key_ids: retired, problem: 'retired_key_signed_nothing' },
  }
}

/**
 * Why a chain may not be continued, or null: its last row is signed and does not match its hash (a column changed in
 * the store). Start refuses such an end, but only by its last row: a row appended onto it would leave the altered row
 * inside the chain and every later start would go ahead, the break seen by verify alone. Said by the append (nothing
 * written), and by acknowledge as the end to acknowledge first. An unsigned chain is left alone: nothing refuses its
 * start, and without a key nothing could acknowledge the break, so every append would stay refused for good.
 */
export function alteredSignedEnd(last: AuditEventRow | undefined, keyring: AuditKeyring | null): string | null {
  if (!last || signingKeyId(last.hash) === null || checkRowHash(storedRow(last), keyring) !== 'mismatch') return null
  return `row ${last.seq} does not match its hash: a column was changed after it was written`
}

/** The refusal an append says over an altered signed end (see alteredSignedEnd). */
export function alteredEndRefusal(seq: number, altered: string): string {
  return `the store's audit chain ends in a broken row: ${altered}. Nothing was appended (a row chained onto it would hide it from every start); run \`warrant audit verify\`, and restore the row from a backup of the store, or, without one, record the break with \`warrant audit acknowledge --at ${seq} --reason …\` (verify keeps reporting it)`
}

/** The head when one is stored and reads as one (see readStoredHead for which of absent and unreadable it is). */
export async function readChainHead(db: Kysely<Database>): Promise<ChainHead | null> {
  return headOf(await readStoredHead(db))
}

/** The head as stored, in its three states (see StoredHead). */
export async function readStoredHead(db: Kysely<Database>): Promise<StoredHead> {
  const row = await db.selectFrom('kv').select('value').where('key', '=', CHAIN_HEAD_KEY).executeTakeFirst()
  return parseChainHead(row?.value ?? null)
}

/** Why the end of a log cannot be confirmed under a head stored but unreadable (`stored`), as verify and acknowledge word it. */
export function unreadableHeadMessage(stored: { readonly text: string; readonly why: string }, lastSeq: number | null): string {
  return `the chain head is stored but unreadable (${unreadableWhy(stored)}): it was overwritten, so the end of the log cannot be confirmed: ${lastSeq === null ? 'the log is empty, and rows may have been removed' : `rows after ${lastSeq} may have been removed`}`
}

/** A head stored but unreadable, quoted as verify, acknowledge and the append's refusal quote it (cut at 80 characters), and why. */
function unreadableWhy(stored: { readonly text: string; readonly why: string }): string {
  const quoted = JSON.stringify(stored.text.length > 80 ? `${stored.text.slice(0, 80)}…` : stored.text)
  return `${quoted} is not a seq and hash as an append writes it: ${stored.why}`
}

/**
 * The head as stored in `kv`: none (`absent`), one that reads as a head (`readable`), or text stored under its key
 * that does not (`unreadable`, with the text and why): a head overwritten with something else is no missing head,
 * and every reader tells the two apart from this alone, never by reading the text again.
 */
export type StoredHead =
  | { readonly state: 'absent' }
  | { readonly state: 'readable'; readonly head: ChainHead }
  | { readonly state: 'unreadable'; readonly text: string; readonly why: string }

/** The head as stored (its JSON text, null: none), in one of its three states. */
export function parseChainHead(value: string | null): StoredHead {
  if (value === null) return { state: 'absent' }
  let parsed: Partial<ChainHead>
  try {
    parsed = JSON.parse(value) as Partial<ChainHead>
  } catch {
    return { state: 'unreadable', text: value, why: 'not JSON' }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { state: 'unreadable', text: value, why: 'not a JSON object' }
  if (!Number.isSafeInteger(parsed.seq)) return { state: 'unreadable', text: value, why: 'its seq is not a whole number' }
  if (typeof parsed.hash !== 'string') return { state: 'unreadable', text: value, why: 'its hash is not text' }
  return {
    state: 'readable',
    head: {
      seq: parsed.seq as number,
      hash: parsed.hash,
      ...(typeof parsed.key_id === 'string' ? { key_id: parsed.key_id } : {}),
      ...(typeof parsed.mac === 'string' ? { mac: parsed.mac } : {}),
    },
  }
}

/** The head when the stored one reads as a head, else null (absent or unreadable: ask `state` which). */
export function headOf(stored: StoredHead): ChainHead | null {
  return stored.state === 'readable' ? stored.head : null
}

export async function writeChainHead(db: Kysely<Database>, head: ChainHead): Promise<void> {
  await chainHeadUpsert(db, head).execute()
}

/** The statement that moves the head (to run alone, or after a data-modifying CTE that appends the rows). */
export function chainHeadUpsert(db: QueryCreator<Database>, head: ChainHead) {
  const value = JSON.stringify(head)
  return db
    .insertInto('kv')
    .values({ key: CHAIN_HEAD_KEY, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
}
