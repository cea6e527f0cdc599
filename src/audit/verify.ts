import type { Kysely } from 'kysely'
import type { AuditEventRow, Database } from '../store/index.js'
import { AUDIT_FIRST_SEQ, AUDIT_GENESIS_HASH, checkRowHash, signingKeyId } from './chain.js'
import { checkCheckpoint, type AuditCheckpoint } from './checkpoint.js'
import { checkHead, headOf, readChainHead, readStoredHead, unreadableHeadMessage, type ChainHead } from './head.js'
import type { AuditKeyring } from './keyring.js'
import { ACKNOWLEDGE_ACTION, readAcknowledgements, type AcknowledgedBreak } from './acknowledged-breaks.js'

/**
 * What was wrong with the first bad row. Beyond the four of a plain hash chain: `forged` (a row or head
 * not signed with the key where the chain is keyed, or a checkpoint not signed with it), `unsigned` (a key
 * is configured but the end of the chain is not signed with it), `unverifiable` (signed with a key this
 * process does not have, or whose key of that id verifies nothing the chain signed with it: the key is in doubt).
 */
export const CHAIN_PROBLEMS = ['altered', 'removed', 'reordered', 'inserted', 'forged', 'unsigned', 'unverifiable'] as const
export type ChainProblem = (typeof CHAIN_PROBLEMS)[number]

/**
 * Which guarantee held for an intact chain: `signed` (every row carries an HMAC of a key kept outside the
 * store), `partly_signed` (rows before `signed_from_seq` were written before a key was configured),
 * `unsigned` (no key: only accidental or partial tampering is detected).
 */
export type ChainGuarantee = 'signed' | 'partly_signed' | 'unsigned'

export interface VerifyOptions {
  readonly pageSize?: number
  readonly keyring?: AuditKeyring | null
  /** a checkpoint exported earlier: the chain must still hold its row, with its hash */
  readonly checkpoint?: AuditCheckpoint
}

/** What an intact walk found: the chain from its first row to its head, every row checked. */
export interface IntactChain {
  /** rows checked */
  readonly rows: number
  /** the last row's seq and hash (null for an empty log): note them elsewhere to detect a later rewrite */
  readonly last_seq: number | null
  readonly last_hash: string | null
  readonly guarantee: ChainGuarantee
  /** the first signed row (null when none is) */
  readonly signed_from_seq: number | null
  /** the keys rows were signed with */
  readonly key_ids: string[]
  /** the checkpoint checked, when one was given */
  readonly checkpoint: { readonly seq: number; readonly hash: string } | null
  /** what this result proves, and what it does not, in one sentence */
  readonly statement: string
}

/**
 * `status` says it all: `ok` (intact, nothing ever broken), `ok_with_acknowledged_breaks` (every row verifies but
 * the breaks an operator acknowledged, listed: `ok` is false, for good), `broken` (the first bad row no
 * acknowledgement covers; the acknowledged breaks the walk passed before it are listed too).
 */
export type VerifyResult =
  | ({ readonly ok: true; readonly status: 'ok'; readonly acknowledged_breaks: AcknowledgedBreak[] } & IntactChain)
  | ({ readonly ok: false; readonly status: 'ok_with_acknowledged_breaks'; readonly acknowledged_breaks: AcknowledgedBreak[] } & IntactChain)
  | {
      readonly ok: false
      readonly status: 'broken'
      /** the first row of the chain that is wrong (see {@link verifyAuditChain} for which row each problem names) */
      readonly first_bad_seq: number
      readonly problem: ChainProblem
      readonly message: string
      /** rows found good before it */
      readonly rows_checked: number
      readonly acknowledged_breaks: AcknowledgedBreak[]
    }

export const VERIFY_PAGE_SIZE = 1000

export interface VerifyOptions {
  readonly pageSize?: number
  /** Hears the rows verified so far and the chain head's seq (the end to expect), after each page. */
  readonly onProgress?: (progress: { readonly rows: number; readonly head_seq: number | null }) => void
}

/**
 * Walk the log in `seq` order, a page at a time (memory does not grow with the log), recomputing every hash
 * and checking `seq` continuity and each `prev_hash` link, then the end of the chain against the head the
 * last append recorded. Stops at the first bad row:
 *
 * - `altered`: a row's content no longer matches its hash (names that row); a row's `seq` was changed (names
 *   the seq it was written with); a row that matches its hash does not link to the row before it, i.e. one
 *   of the two was rewritten with a recomputed hash (names the earlier); the last row differs from the head.
 * - `removed`: rows are missing (names the row after the gap; for rows missing from the end, the first
 *   missing seq).
 * - `reordered`: a row holds the content written for another seq (names the first of the two).
 * - `inserted`: a row past the recorded head, or before the first seq: not written by the audit log.
 *
 * A hash chain without a secret cannot tell a row forged at the end with a correctly computed hash from a
 * real one; the head (updated in the same transaction as each append) only narrows that.
 */
export async function verifyAuditChain(db: Kysely<Database>, options: VerifyOptions = {}): Promise<VerifyResult> {
  const pageSize = options.pageSize ?? VERIFY_PAGE_SIZE
  const keyring = options.keyring ?? null
  const checkpoint = options.checkpoint ?? null
  const check = (row: AuditEventRow) => checkRowHash(row, keyring)
  let signedFrom: number | null = null
  /** when the first signed row was written: where signing began, for an operator to compare with when the key was configured */
  let signedFromAt: string | null = null
  const keyIds = new Set<string>()
  let head = await readChainHead(db)
  let expected = AUDIT_FIRST_SEQ
  let prevHash = AUDIT_GENESIS_HASH
  let prevSeq: number | null = null
  let after: number | null = null
  let rows = 0
  const acks = await readAcknowledgements(db, keyring)
  const acknowledged: AcknowledgedBreak[] = []
  /** the row after an acknowledged break: its link to the broken row is not checked (its own hash is) */
  let relink = false
  /** how the checkpoint's row was met: found good with its hash, passed as an acknowledged break, or not yet */
  let checkpointRow: 'held' | 'acknowledged' | null = null
  const bad = (first_bad_seq: number, problem: ChainProblem, message: string): VerifyResult => ({ ok: false, status: 'broken', first_bad_seq, problem, message, rows_checked: rows, acknowledged_breaks: acknowledged })
  /** A break at a row an acknowledgement named, whose row has changed since, is said to be a new one. */
  const again = (seq: number, match: string) => (match === 'changed' ? ` (row ${seq} also differs from the row acknowledged at that seq: it was changed again since)` : '')
  /** A row passed as an acknowledged break: the walk goes on from its stored hash, its own check skipped. */
  const pass = (row: AuditEventRow) => {
    // the guarantee still says where signing began: a passed row that claims a key counts as signed where it stands
    const claimed = signingKeyId(row.hash)
    if (claimed !== null && signedFrom === null) {
      signedFrom = row.seq
      signedFromAt = row.at
    }
    if (checkpoint && row.seq === checkpoint.seq) checkpointRow = 'acknowledged'
    expected = row.seq + 1
    prevHash = row.hash
    prevSeq = row.seq
    rows += 1
    relink = true
  }

  if (checkpoint) {
    const state = checkCheckpoint(checkpoint, keyring)
    if (state === 'unknown_key') return bad(checkpoint.seq, 'unverifiable', `the checkpoint is signed with key "${checkpoint.key_id}", which is not configured here`)
    if (state === 'mismatch') return bad(checkpoint.seq, 'forged', `the checkpoint at seq ${checkpoint.seq} is not signed with key "${checkpoint.key_id}": it was not exported by Warrant`)
  }

  /** Whether `seq` is past the head; the head is re-read first, as appends may have landed since. */
  const beyondHead = async (seq: number): Promise<boolean> => {
    if (head === null || seq <= head.seq) return false
    head = await readChainHead(db)
    return head !== null && seq > head.seq
  }

  for (;;) {
    let query = db.selectFrom('audit_events').selectAll().orderBy('seq').limit(pageSize)
    if (after !== null) query = query.where('seq', '>', after)
    const page = await query.execute()

    for (const row of page) {
      after = row.seq
      const state = check(row)
      const selfOk = state === 'ok'

      if (row.seq < expected) {
        // Only possible before the first row: the seq is below the first one ever written.
        const home = await homeOf(db, row, head, keyring)
        if (home !== null) return bad(home, 'altered', `row ${home} was renumbered to ${row.seq}: its content matches its hash only as seq ${home}`)
        return bad(row.seq, 'inserted', `row ${row.seq} comes before the chain's first seq (${AUDIT_FIRST_SEQ}) and belongs nowhere in it`)
      }

      if (row.seq > expected) {
        const moved = await renumberedRow(db, expected, prevHash, keyring)
        if (moved) return bad(expected, 'altered', `row ${expected} was renumbered to ${moved.seq}: its content matches its hash only as seq ${expected}`)
        if (await beyondHead(row.seq)) return bad(row.seq, 'inserted', `row ${row.seq} is past the chain head (seq ${head?.seq}) and the rows before it are missing: it was not written by the audit log`)
        const missing = row.seq - 1 === expected ? `row ${expected} is` : `rows ${expected}..${row.seq - 1} are`
        // rows cut from the end are acknowledged at the first missing seq, a gap at the row after it
        if ((await acks.match(expected, 'removed', prevSeq)) !== 'passed' && (await acks.match(row.seq, 'removed', prevSeq)) !== 'passed')
          return bad(row.seq, 'removed', `${missing} missing: row ${row.seq} follows row ${prevSeq ?? '(genesis)'}${row.prev_hash === prevHash ? '' : ' and does not link to it'}`)
        relink = true
      }
      const linkFree = relink
      relink = false

      if (await beyondHead(row.seq)) return bad(row.seq, 'inserted', `row ${row.seq} is past the chain head (seq ${head?.seq}) recorded by the last append: it was not written by the audit log`)

      if (state === 'unknown_key')
        return bad(row.seq, 'unverifiable', `row ${row.seq} is signed with key "${signingKeyId(row.hash)}", which is not configured here: its content cannot be checked`)
      if (!selfOk) {
        const home = await homeOf(db, row, head, keyring)
        if (home !== null && home !== row.seq) {
          const match = await acks.match(row.seq, 'reordered')
          if (match !== 'passed') return bad(row.seq, 'reordered', `row ${row.seq} holds the content written as row ${home}${again(row.seq, match)}`)
          pass(row)
          continue
        }
        const claimed = signingKeyId(row.hash)
        if (claimed !== null && !keyIds.has(claimed) && (await keyVerifiesNothing(db, row.seq, claimed, head, keyring)))
          return bad(
            row.seq,
            'unverifiable',
            `row ${row.seq} does not verify with the configured audit key "${claimed}", and neither does anything else signed with "${claimed}" (the signed chain head, the later rows): either the configured "${claimed}" is not the key that signed this chain (a key file written anew, another secret under the same id) or the chain was rewritten. Verify with the key that signed it; if that is this key, the rows were altered`,
          )
        const match = await acks.match(row.seq, 'altered')
        if (match !== 'passed') return bad(row.seq, 'altered', `row ${row.seq} does not match its hash: a column was changed after it was written${again(row.seq, match)}`)
        pass(row)
        continue
      }

      if (!linkFree && row.prev_hash !== prevHash) {
        const suspect = prevSeq ?? row.seq
        const match = await acks.match(suspect, 'altered')
        if (match !== 'passed')
          return bad(
            suspect,
            'altered',
            (prevSeq === null
              ? `row ${row.seq} does not start from the genesis hash: it was rewritten with a recomputed hash`
              : `row ${row.seq} does not link to row ${prevSeq}: row ${prevSeq} (or ${row.seq}) was rewritten with a recomputed hash`) + again(suspect, match),
          )
      }

      const keyId = signingKeyId(row.hash)
      if (keyId !== null) {
        if (signedFrom === null) {
          signedFrom = row.seq
          signedFromAt = row.at
        }
        keyIds.add(keyId)
      } else if (signedFrom !== null) {
        const match = await acks.match(row.seq, 'forged')
        if (match !== 'passed') return bad(row.seq, 'forged', `row ${row.seq} is not signed though row ${signedFrom} and later ones are: it was written by someone without the audit key${again(row.seq, match)}`)
        pass(row)
        continue
      }
      if (checkpoint && row.seq === checkpoint.seq && row.hash !== checkpoint.hash)
        return bad(row.seq, 'altered', `row ${row.seq} is not the row the checkpoint of ${checkpoint.at} names: the chain was rewritten since`)
      if (checkpoint && row.seq === checkpoint.seq) checkpointRow = 'held'

      expected = row.seq + 1
      prevHash = row.hash
      prevSeq = row.seq
      rows += 1
      const acknowledgement = row.action === ACKNOWLEDGE_ACTION ? acks.at(row.seq) : undefined
      if (acknowledgement) acknowledged.push(acknowledgement)
    }

    options.onProgress?.({ rows, head_seq: head?.seq ?? null })
    if (page.length === pageSize) continue
    // The end of the stream: it must be the head the last append recorded.
    const stored = await readStoredHead(db)
    head = headOf(stored)
    const lastSeq = prevSeq ?? AUDIT_FIRST_SEQ - 1
    if (head === null) {
      // a head stored but not readable as one (not JSON, no whole seq or no hash) was overwritten: never taken for none
      if (stored.state === 'unreadable')
        return bad(
          lastSeq + 1,
          'removed',
          unreadableHeadMessage(stored, rows === 0 ? null : lastSeq),
        )
      if (rows === 0 && checkpoint)
        return bad(AUDIT_FIRST_SEQ, 'removed', `the log is empty, but the checkpoint of ${checkpoint.at} names row ${checkpoint.seq}: every row and the chain head were removed`)
      // Nothing signed is left to check, so nothing tells a log never written from one wiped with its head.
      if (rows === 0)
        return { ok: true, status: 'ok', acknowledged_breaks: [], rows: 0, last_seq: null, last_hash: null, guarantee: 'unsigned', signed_from_seq: null, key_ids: [], checkpoint: null, statement: `the log is empty${keyring ? '; an empty log carries no signature, so only a checkpoint kept outside the store can show that rows were removed' : ''}` }
      return bad(lastSeq + 1, 'removed', `the chain head is missing, so the end of the log cannot be confirmed: rows after ${lastSeq} may have been removed`)
    }
    if (head.seq > lastSeq) {
      const more = await db.selectFrom('audit_events').select('seq').where('seq', '>', after ?? Number.MIN_SAFE_INTEGER).limit(1).executeTakeFirst()
      if (more) continue // appended while we read
      const missing = head.seq === lastSeq + 1 ? `row ${head.seq} is` : `rows ${lastSeq + 1}..${head.seq} are`
      return bad(lastSeq + 1, 'removed', `${missing} missing from the end of the log (the last append recorded seq ${head.seq})`)
    }
    if (head.seq === lastSeq && head.hash !== prevHash)
      return bad(lastSeq, 'altered', `row ${lastSeq} is not the row the last append wrote (its hash differs from the chain head): it was rewritten with a recomputed hash`)
    if (checkpoint && lastSeq < checkpoint.seq)
      return bad(lastSeq + 1, 'removed', `the chain ends at seq ${lastSeq}, but the checkpoint of ${checkpoint.at} names row ${checkpoint.seq}: rows were removed from the end`)
    // An acknowledgement records a break; it never makes the chain hold the row a checkpoint vouches for again
    if (checkpoint && checkpointRow !== 'held') {
      const how = checkpointRow === 'acknowledged' ? ['altered', 'is an acknowledged break: the chain no longer holds it as the checkpoint saw it'] as const : ['removed', 'is not in the chain: it lies in an acknowledged gap'] as const
      return bad(checkpoint.seq, how[0], `row ${checkpoint.seq}, which the checkpoint of ${checkpoint.at} names, ${how[1]}`)
    }
    if (signedFrom !== null) {
      const headState = checkHead(head, keyring)
      if (headState !== 'ok')
        return bad(lastSeq, 'forged', `the chain head (seq ${head.seq}) is ${headState === 'unsigned' ? 'not signed' : 'not signed with the audit key'}: it was moved by someone without the key, e.g. to hide rows removed from the end`)
    } else if (keyring && rows > 0)
      return bad(
        lastSeq,
        'unsigned',
        `an audit key is configured but no row is signed with it: either nothing was appended since the key was configured (any new request signs the chain from there on), or the chain was rewritten by someone without the key (e.g. every signed row cut back to the rows written before a key was configured, with the head: nothing in the store can show that; only a checkpoint kept outside the store can)`,
      )
    const guarantee: ChainGuarantee = signedFrom === null ? 'unsigned' : signedFrom === AUDIT_FIRST_SEQ ? 'signed' : 'partly_signed'
    const intact: IntactChain = {
      rows,
      last_seq: prevSeq,
      last_hash: prevSeq === null ? null : prevHash,
      guarantee,
      signed_from_seq: signedFrom,
      key_ids: [...keyIds],
      checkpoint: checkpoint ? { seq: checkpoint.seq, hash: checkpoint.hash } : null,
      statement: statementFor(guarantee, signedFrom, signedFromAt, checkpoint),
    }
    // an acknowledged break is never `ok` again: the rows around it verify, the break stays said
    return acknowledged.length === 0 ? { ok: true, status: 'ok', acknowledged_breaks: [], ...intact } : { ok: false, status: 'ok_with_acknowledged_breaks', acknowledged_breaks: acknowledged, ...intact }
  }
}

/**
 * Whether the configured key of `keyId` verifies nothing else the chain signed with that id (called for the first row
 * of that id, which it does not verify): the signed head, or a few later rows. Then the key, not the row, is in
 * doubt, and "a column was changed" would accuse a chain the verifier cannot check (a key file written anew under the
 * chain's id). A head left unsigned over signed rows is no such doubt: Warrant signs the head with every signed row,
 * so that chain was rewritten, and stays `altered`.
 */
async function keyVerifiesNothing(db: Kysely<Database>, seq: number, keyId: string, head: ChainHead | null, keyring: AuditKeyring | null): Promise<boolean> {
  if (head === null || head.key_id === undefined || head.mac === undefined) return false
  if (head.key_id === keyId && checkHead(head, keyring) === 'ok') return false
  const later = await db.selectFrom('audit_events').selectAll().where('seq', '>', seq).where('hash', 'like', `hmac-sha256:${keyId}:%`).orderBy('seq').limit(8).execute()
  return !later.some((r) => signingKeyId(r.hash) === keyId && checkRowHash(r, keyring) === 'ok')
}

/**
 * The seq a row's content was written as, when it is not where it is now: found from its neighbours in the
 * chain (the row its `prev_hash` names, the row naming its hash) and confirmed by its own hash.
 */
async function homeOf(db: Kysely<Database>, row: AuditEventRow, head: ChainHead | null, keyring: AuditKeyring | null): Promise<number | null> {
  const candidates = new Set<number>()
  if (row.prev_hash === AUDIT_GENESIS_HASH) candidates.add(AUDIT_FIRST_SEQ)
  for (const r of await db.selectFrom('audit_events').select('seq').where('hash', '=', row.prev_hash).limit(8).execute()) candidates.add(r.seq + 1)
  for (const r of await db.selectFrom('audit_events').select('seq').where('prev_hash', '=', row.hash).limit(8).execute()) candidates.add(r.seq - 1)
  if (head && head.hash === row.hash) candidates.add(head.seq)
  for (const seq of candidates) if (seq !== row.seq && checkRowHash({ ...row, seq }, keyring) === 'ok') return seq
  return null
}

/** A row stored under another seq whose content was written as `seq`, right after the row hashed `prevHash`. */
async function renumberedRow(db: Kysely<Database>, seq: number, prevHash: string, keyring: AuditKeyring | null): Promise<AuditEventRow | null> {
  const rows = await db.selectFrom('audit_events').selectAll().where('prev_hash', '=', prevHash).where('seq', '<>', seq).limit(8).execute()
  return rows.find((r) => checkRowHash({ ...r, seq }, keyring) === 'ok') ?? null
}

function statementFor(guarantee: ChainGuarantee, signedFrom: number | null, signedFromAt: string | null, checkpoint: AuditCheckpoint | null): string {
  const since = checkpoint ? `; the checkpoint of ${checkpoint.at} (seq ${checkpoint.seq}) still holds` : ''
  if (guarantee === 'signed')
    return `every row is signed with a key kept outside the store: an altered, removed, reordered or forged row, and a rewrite of the chain by someone without the key, would have been detected${since}. Cutting the end back to an older signed head is detected only against a later checkpoint.`
  if (guarantee === 'partly_signed')
    return `rows from seq ${signedFrom} are signed with a key kept outside the store (alteration, removal, reordering, forgery and rewriting without the key are detected there); rows before it were written without a key, and are protected against a deliberate rewrite only by a checkpoint taken after them${since}. Signing began at seq ${signedFrom} (${signedFromAt}): if the key was configured before then, the chain may have been cut back to the unsigned rows (every signed row and the head removed) and signed anew on top, which nothing in the store shows (a key holding a retired key refuses to append there); only a checkpoint kept outside the store, taken before, shows it.`
  return `no audit key: the chain detects accidental or partial tampering only. Someone with write access to the store can rewrite rows, every later hash and the head without being detected${since}. Configure audit.key to sign the chain.`
}
