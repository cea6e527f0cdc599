import type { Kysely } from 'kysely'
import type { AuditEventRow, Database } from '../store/index.js'
import { AUDIT_FIRST_SEQ, AUDIT_GENESIS_HASH, hashAuditRow } from './chain.js'
import { readChainHead, type ChainHead } from './head.js'

/** What was wrong with the first bad row. */
export type ChainProblem = 'altered' | 'removed' | 'reordered' | 'inserted'

export type VerifyResult =
  | {
      readonly ok: true
      /** rows checked */
      readonly rows: number
      /** the last row's seq and hash (null for an empty log): note them elsewhere to detect a later rewrite */
      readonly last_seq: number | null
      readonly last_hash: string | null
    }
  | {
      readonly ok: false
      /** the first row of the chain that is wrong (see {@link verifyAuditChain} for which row each problem names) */
      readonly first_bad_seq: number
      readonly problem: ChainProblem
      readonly message: string
      /** rows found good before it */
      readonly rows_checked: number
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
  let head = await readChainHead(db)
  let expected = AUDIT_FIRST_SEQ
  let prevHash = AUDIT_GENESIS_HASH
  let prevSeq: number | null = null
  let after: number | null = null
  let rows = 0
  const bad = (first_bad_seq: number, problem: ChainProblem, message: string): VerifyResult => ({ ok: false, first_bad_seq, problem, message, rows_checked: rows })

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
      const selfOk = hashAuditRow(row) === row.hash

      if (row.seq < expected) {
        // Only possible before the first row: the seq is below the first one ever written.
        const home = await homeOf(db, row, head)
        if (home !== null) return bad(home, 'altered', `row ${home} was renumbered to ${row.seq}: its content matches its hash only as seq ${home}`)
        return bad(row.seq, 'inserted', `row ${row.seq} comes before the chain's first seq (${AUDIT_FIRST_SEQ}) and belongs nowhere in it`)
      }

      if (row.seq > expected) {
        const moved = await renumberedRow(db, expected, prevHash)
        if (moved) return bad(expected, 'altered', `row ${expected} was renumbered to ${moved.seq}: its content matches its hash only as seq ${expected}`)
        if (await beyondHead(row.seq)) return bad(row.seq, 'inserted', `row ${row.seq} is past the chain head (seq ${head?.seq}) and the rows before it are missing: it was not written by the audit log`)
        const missing = row.seq - 1 === expected ? `row ${expected} is` : `rows ${expected}..${row.seq - 1} are`
        return bad(row.seq, 'removed', `${missing} missing: row ${row.seq} follows row ${prevSeq ?? '(genesis)'}${row.prev_hash === prevHash ? '' : ' and does not link to it'}`)
      }

      if (await beyondHead(row.seq)) return bad(row.seq, 'inserted', `row ${row.seq} is past the chain head (seq ${head?.seq}) recorded by the last append: it was not written by the audit log`)

      if (!selfOk) {
        const home = await homeOf(db, row, head)
        if (home !== null && home !== row.seq) return bad(row.seq, 'reordered', `row ${row.seq} holds the content written as row ${home}`)
        return bad(row.seq, 'altered', `row ${row.seq} does not match its hash: a column was changed after it was written`)
      }

      if (row.prev_hash !== prevHash) {
        const suspect = prevSeq ?? row.seq
        return bad(
          suspect,
          'altered',
          prevSeq === null
            ? `row ${row.seq} does not start from the genesis hash: it was rewritten with a recomputed hash`
            : `row ${row.seq} does not link to row ${prevSeq}: row ${prevSeq} (or ${row.seq}) was rewritten with a recomputed hash`,
        )
      }

      expected = row.seq + 1
      prevHash = row.hash
      prevSeq = row.seq
      rows += 1
    }

    options.onProgress?.({ rows, head_seq: head?.seq ?? null })
    if (page.length === pageSize) continue
    // The end of the stream: it must be the head the last append recorded.
    head = await readChainHead(db)
    const lastSeq = prevSeq ?? AUDIT_FIRST_SEQ - 1
    if (head === null) {
      if (rows === 0) return { ok: true, rows: 0, last_seq: null, last_hash: null }
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
    return { ok: true, rows, last_seq: prevSeq, last_hash: prevSeq === null ? null : prevHash }
  }
}

/**
 * The seq a row's content was written as, when it is not where it is now: found from its neighbours in the
 * chain (the row its `prev_hash` names, the row naming its hash) and confirmed by its own hash.
 */
async function homeOf(db: Kysely<Database>, row: AuditEventRow, head: ChainHead | null): Promise<number | null> {
  const candidates = new Set<number>()
  if (row.prev_hash === AUDIT_GENESIS_HASH) candidates.add(AUDIT_FIRST_SEQ)
  for (const r of await db.selectFrom('audit_events').select('seq').where('hash', '=', row.prev_hash).limit(8).execute()) candidates.add(r.seq + 1)
  for (const r of await db.selectFrom('audit_events').select('seq').where('prev_hash', '=', row.hash).limit(8).execute()) candidates.add(r.seq - 1)
  if (head && head.hash === row.hash) candidates.add(head.seq)
  for (const seq of candidates) if (seq !== row.seq && hashAuditRow({ ...row, seq }) === row.hash) return seq
  return null
}

/** A row stored under another seq whose content was written as `seq`, right after the row hashed `prevHash`. */
async function renumberedRow(db: Kysely<Database>, seq: number, prevHash: string): Promise<AuditEventRow | null> {
  const rows = await db.selectFrom('audit_events').selectAll().where('prev_hash', '=', prevHash).where('seq', '<>', seq).limit(8).execute()
  return rows.find((r) => hashAuditRow({ ...r, seq }) === r.hash) ?? null
}
