import { sql } from 'kysely'
import type { Kysely, QueryCreator } from 'kysely'
import { immediateTransaction, joinCommits, type AuditEventRow, type Database, type JoinedWrites, type Store } from '../store/index.js'
import { isWarrantError, WarrantError } from '../contract/index.js'
import { hashAuditRow, signingKeyId, type UnhashedAuditRow } from './chain.js'
import type { NewRow } from './events.js'
import { sqliteAuditInsert } from './sqlite-insert.js'
import { CHAIN_HEAD_KEY, alteredEndRefusal, alteredSignedEnd, chainHeadUpsert, chainTip, checkHead, headOf, parseChainHead, signHead, unsignedHeadOverSignedRows, unsignedTipRefusal, type ChainHead } from './head.js'
import { AUDIT_KEY_ENV, type AuditKeyring } from './keyring.js'

/** The few log methods the audit log uses; a pino logger fits. */
export interface AuditLogLogger {
  error(fields: object, message: string): void
}

/**
 * PostgreSQL advisory lock taken by every append transaction, so appends from every gateway instance
 * sharing the database form one chain. The number is arbitrary and fixed ("WRNTAUDT" would not fit).
 */
export const AUDIT_ADVISORY_LOCK_KEY = 7_310_551_044_205_061

const INSERT_CHUNK = 100
/** How long a call-level row waits for others before its batch is appended. */
export const CALL_LINGER_MS = 20
const MAX_ATTEMPTS = 8

export interface Pending {
  readonly row: NewRow
  readonly resolve?: (row: AuditEventRow) => void
  readonly reject?: (error: unknown) => void
}

export interface AppendQueue {
  enqueue(item: Pending): void
  /** Resolves when everything queued so far has been written (or has failed and been logged). */
  flush(): Promise<void>
  /** Log events that were dropped; a broken logger must not break the caller either. */
  report(error: unknown, dropped: object[]): void
}

/** Appends queued rows in order, in batches of at most `maxBatch` rows a transaction. */
export function createAppendQueue(store: Store, log: AuditLogLogger, maxBatch: number, keyring: AuditKeyring | null = null): AppendQueue {
  const db = store.db
  const queue: Pending[] = []
  const seen: UnsignedSeen = { upTo: 0 }
  let draining: Promise<void> | null = null
  let lingering: ReturnType<typeof setTimeout> | null = null

  function start(): void {
    if (lingering !== null) clearTimeout(lingering)
    lingering = null
    // Started on the next microtask, so a synchronous burst of calls shares one transaction.
    if (draining === null) draining = Promise.resolve().then(drain)
  }

  function enqueue(item: Pending): void {
    queue.push(item)
    if (draining !== null) return // the running drain takes it with the next batch
    // A run-level row has a caller waiting for its seq: appended at once, with every call row queued before it.
    // Call rows have no caller waiting: they wait up to CALL_LINGER_MS for others, so a stream of upstream calls
    // (an executor's GETs and PATCHes, each in its own turn of the loop) is one transaction, one sync, per
    // window instead of one per call. A row is as durable once appended as before; a crash loses what was queued,
    // as it did when the queue drained a microtask later.
    if (item.resolve || queue.length >= maxBatch) start()
    else lingering ??= setTimeout(start, CALL_LINGER_MS) // not unref'd: a process ending on its own appends them first
  }

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) {
        held = store.dialect === 'sqlite' ? await appendTaken() : queue.splice(0, maxBatch)
        if (held !== null) await appendBatch(held)
        held = null
      }
    } finally {
      draining = null
    }
  }

  /** Rows out of the queue and not yet written: no row queued after them may join a commit ahead of them. */
  let held: Pending[] | null = null

  /**
   * SQLite: the rows are taken from the queue inside the transaction that appends them, once it holds the one
   * connection. Until then a ledger commit may take them instead (joinCommits), and a batch taken here is never
   * overtaken by rows queued after it. Returns the batch when its append failed (appendBatch retries it), else null.
   */
  async function appendTaken(): Promise<Pending[] | null> {
    let batch: Pending[] = []
    try {
      const rows = await immediateTransaction(db, async (conn) => {
        // rows a ledger commit took and then rolled back are put back at the head first
        while (joined !== null) await joined
        batch = queue.splice(0, maxBatch)
        return batch.length === 0 ? [] : writeRows(conn, batch.map((p) => p.row), keyring, 'sqlite', seen)
      })
      settle(batch, rows)
      return null
    } catch {
      return batch.length > 0 ? batch : queue.splice(0, maxBatch)
    }
  }

  /** Rows written inside another module's transaction, settled when it ends (see joinCommits). */
  let joined: Promise<void> | null = null

  // On SQLite, queued rows join the operations ledger's commits: one sync for a window's outcomes and the audit
  // rows of its upstream calls instead of one each (on PostgreSQL appends run on other pooled connections, in
  // parallel with the ledger, and joining would serialise the ledger's two lanes behind the chain's lock).
  if (store.dialect === 'sqlite')
    joinCommits(db, {
      async join(trx): Promise<JoinedWrites | null> {
        // Not while a drain holds rows it took (they must reach the chain first), nor twice at once.
        if (held !== null || joined !== null || queue.length === 0) return null
        const batch = queue.splice(0, maxBatch)
        if (queue.length === 0 && lingering !== null) {
          clearTimeout(lingering)
          lingering = null
        }
        let written: AuditEventRow[]
        // a savepoint: a row the chain refuses (no key on a signed chain) must not undo the ledger's writes
        await sql`savepoint audit_join`.execute(trx)
        try {
          written = await writeRows(trx, batch.map((p) => p.row), keyring, 'sqlite', seen)
          await sql`release savepoint audit_join`.execute(trx)
        } catch {
          await sql`rollback to savepoint audit_join`.execute(trx)
          await sql`release savepoint audit_join`.execute(trx)
          // appended on their own, where a refusal is retried, reported and rejected as for any row
          queue.unshift(...batch)
          start()
          return null
        }
        let landed!: () => void
        joined = new Promise<void>((resolve) => (landed = resolve))
        const end = () => {
          joined = null
          landed()
        }
        return {
          committed() {
            end()
            settle(batch, written)
          },
          rolledBack() {
            // the ledger's transaction failed: the rows were never written; they go first in the next append
            queue.unshift(...batch)
            end()
            start()
          },
        }
      },
    })

  async function appendBatch(batch: Pending[]): Promise<void> {
    try {
      settle(batch, await appendWithRetry(batch.map((p) => p.row)))
      return
    } catch (error) {
      // A store that cannot answer at all (closed, unreachable) fails the whole batch at once.
      if (batch.length === 1 || !(await storeAnswers())) return fail(batch, error)
    }
    // Otherwise one bad row must not take the others down with it: append them one at a time.
    const failed: Pending[] = []
    let lastError: unknown
    for (const item of batch) {
      try {
        settle([item], await appendWithRetry([item.row]))
      } catch (error) {
        lastError = error
        failed.push(item)
      }
    }
    if (failed.length > 0) fail(failed, lastError)
  }

  async function storeAnswers(): Promise<boolean> {
    try {
      await db.selectFrom('kv').select('key').limit(1).execute()
      return true
    } catch {
      return false
    }
  }

  function settle(batch: Pending[], rows: AuditEventRow[]): void {
    batch.forEach((item, i) => item.resolve?.(rows[i]!))
  }

  function fail(batch: Pending[], error: unknown): void {
    const unreported = batch.filter((item) => !item.reject)
    for (const item of batch) item.reject?.(error)
    if (unreported.length > 0) report(error, unreported.map(({ row }) => ({ level: row.level, action: row.action, operation_id: row.operation_id, target_id: row.target_id, at: row.at })))
  }

  function report(error: unknown, dropped: object[]): void {
    try {
      log.error({ err: error, dropped: dropped.length, events: dropped.slice(0, 20) }, 'audit: events could not be appended')
    } catch {
      // nothing left to tell
    }
  }

  async function appendWithRetry(rows: NewRow[]): Promise<AuditEventRow[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await appendOnce(store, rows, keyring, seen)
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error
        await sleep(Math.min(250, 5 * 2 ** attempt) * (0.5 + Math.random()))
      }
    }
  }

  return {
    enqueue,
    async flush() {
      if (queue.length > 0) start()
      while (draining !== null || joined !== null) await (draining ?? joined)
    },
    report,
  }
}

/** The chain's end as the appending transaction found it, under the chain's lock. */
export interface ChainEndFound {
  /** the head when it reads as one; null: missing, or stored but unreadable (then `head_unreadable` is its text) */
  readonly head: ChainHead | null
  readonly head_unreadable?: string
  readonly last: { readonly seq: number; readonly hash: string } | null
}

/** An acknowledgement row, built from the chain's end it is appended over (see acknowledge.ts). */
export type AcknowledgementRow = (found: ChainEndFound) => NewRow

/**
 * Appends one signed acknowledgement row to a chain that appends otherwise refuse (a missing or unsigned head over
 * signed rows, a signed head the key does not verify), and moves the head to it: the break it records was
 * reported by `verify` with this key just before, and the row, signed, says so for good. Only the keyless refusal
 * stays: an unsigned acknowledgement would be anyone's word.
 */
export async function appendAcknowledgement(store: Store, keyring: AuditKeyring, build: AcknowledgementRow): Promise<AuditEventRow> {
  const [row] = await appendOnce(store, build, keyring)
  return row!
}

/**
 * What a keyless process has read of its store's chain: no row up to `upTo` is signed. Every append continues from the
 * tip, so no row below it is signed later; each keyless append reads only the rows written since (its own and others'),
 * for unsigned rows forged over signed ones (unsignedTipRefusal), and the chain is not read whole again per append.
 * Only what was read is kept, never the rows this process wrote: a transaction that rolls back leaves their seqs to
 * the next writer.
 */
interface UnsignedSeen {
  upTo: number
  /**
   * The last row this process's latest keyless append wrote, over the rows read up to `from`: met again as the chain's
   * last row, that append committed and no one wrote since, so every row up to it is known (those read, then its own
   * unsigned rows) and the next append reads nothing (one query a transaction fewer). Met otherwise (rolled back, or
   * others wrote since), the rows after `upTo` are read as before.
   */
  mine?: { readonly from: number; readonly seq: number; readonly hash: string }
}

/** One transaction that holds the chain's write lock: read the tip, insert the rows, move the head. */
async function appendOnce(store: Store, rows: NewRow[] | AcknowledgementRow, keyring: AuditKeyring | null, seen: UnsignedSeen = { upTo: 0 }): Promise<AuditEventRow[]> {
  const db = store.db
  if (store.dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${sql.lit(AUDIT_ADVISORY_LOCK_KEY)})`.execute(trx)
      return writeRows(trx, rows, keyring, 'postgres', seen)
    })
  }
  // SQLite: kysely runs every query on one connection behind a mutex, which `connection()` holds for the
  // whole callback (serialising this process); BEGIN IMMEDIATE takes the database's write lock before the
  // tip is read (serialising other processes; they wait for it up to the store's busy timeout).
  return immediateTransaction(db, (conn) => writeRows(conn, rows, keyring, 'sqlite', seen))
}

async function writeRows(tx: Kysely<Database>, given: NewRow[] | AcknowledgementRow, keyring: AuditKeyring | null, dialect: 'sqlite' | 'postgres', seen: UnsignedSeen): Promise<AuditEventRow[]> {
  const key = keyring?.current ?? null
  // The head and the last row in one statement (a round trip fewer on PostgreSQL). Continue from the head when it
  // is ahead of the last row: rows removed from the end stay a visible gap.
  // The whole last row: an append checks the row it continues from (alteredSignedEnd).
  const { rows: tips } = await sql<{ chain_head: string | null } & { [K in keyof AuditEventRow]: AuditEventRow[K] | null }>`
    select (select value from kv where key = ${CHAIN_HEAD_KEY}) as chain_head, e.*
      from (select 1 as one) as d left join (select * from audit_events order by seq desc limit 1) as e on 1 = 1`.execute(tx)
  const { chain_head, ...found } = tips[0]!
  const stored = parseChainHead(chain_head)
  const head = headOf(stored)
  const lastRow = found.seq !== null && found.hash !== null ? ({ ...found, seq: Number(found.seq) } as AuditEventRow) : undefined
  const last = lastRow && { seq: lastRow.seq, hash: lastRow.hash }
  const tip = chainTip(head, last)
  // An unsigned row after signed ones is what a forger writes: verify would name it `forged` for good. A process
  // without the key (an operator's shell lacking WARRANT_AUDIT_KEY, an instance started without it) is refused, here
  // on a signed tip, below (overSignedRows) on an unsigned tip over signed rows.
  const signedWith = signingKeyId(tip.hash)
  if (key === null && signedWith !== null)
    throw new WarrantError(
      'conflict',
      `the audit chain is signed with audit key "${signedWith}" (up to seq ${tip.seq}), but no audit key is configured in this process: an unsigned row would break the chain. Configure the key (audit.key or ${AUDIT_KEY_ENV}) as the gateway that signs it does`,
      { key_id: signedWith, seq: tip.seq },
    )
  // A key with the chain's id but another secret (a lost key file written anew under its date-based id) would sign
  // rows the chain's own key cannot verify, and verify would then call the older rows forged. Startup refuses such a
  // key (assertChainKeyConfigured); this catches every other writer (a reading command's own row, a refusal's row)
  // for one HMAC: the signed head must verify with the key of its id.
  const acknowledging = typeof given === 'function'
  if (!acknowledging && head && checkHead(head, keyring) === 'mismatch')
    throw new WarrantError(
      'conflict',
      `the audit chain's head (seq ${head.seq}) is signed with audit key "${head.key_id}", and the configured key of that id does not verify it: the key was replaced or the head altered. Nothing was appended; restore the key that signed the chain, then run \`warrant audit verify\``,
      { key_id: head.key_id, seq: head.seq },
    )
  const headless = acknowledging ? null : unsignedHeadOverSignedRows(stored, last)
  if (headless !== null) throw new WarrantError('conflict', headless.message, { seq: last!.seq, head: headless.head })
  const overSigned = acknowledging || signedWith !== null ? null : await overSignedRows(tx, tip.seq, keyring, seen, last)
  if (overSigned !== null) throw new WarrantError('conflict', overSigned.message, overSigned.details)
  const altered = acknowledging ? null : alteredSignedEnd(lastRow, keyring)
  if (altered !== null) throw new WarrantError('conflict', alteredEndRefusal(last!.seq, altered), { seq: last!.seq, problem: 'altered' })
  const rows = acknowledging ? [given({ head, ...(stored.state === 'unreadable' ? { head_unreadable: stored.text } : {}), last: last ?? null })] : given
  let seq = tip.seq
  let prev = tip.hash
  const written = rows.map((row): AuditEventRow => {
    seq += 1
    const unhashed: UnhashedAuditRow = { ...row, seq, prev_hash: prev }
    prev = hashAuditRow(unhashed, key)
    return { ...unhashed, hash: prev }
  })
  if (keyring === null) seen.mine = { from: tip.seq, seq, hash: prev }
  const moved = key ? signHead({ seq, hash: prev }, key) : { seq, hash: prev }
  for (let i = 0; i < written.length; i += INSERT_CHUNK) {
    const chunk = written.slice(i, i + INSERT_CHUNK)
    const lastChunk = i + INSERT_CHUNK >= written.length
    // SQLite: one compiled statement per row count (see sqliteAuditInsert). PostgreSQL: the rows as one JSON
    // parameter, so every batch is the same statement (a VALUES list of 13 parameters per row was a new statement
    // to parse and plan for each batch size, and 13 parameters to encode per row); the last rows and the head move
    // in one statement (a data-modifying CTE)
    const insert = (qc: QueryCreator<Database>) => qc.insertInto('audit_events').expression(sql`select * from json_populate_recordset(null::audit_events, ${JSON.stringify(chunk)}::json)`)
    if (dialect === 'sqlite') await tx.executeQuery(sqliteAuditInsert(chunk))
    else if (lastChunk) await chainHeadUpsert(tx.with('appended', insert), moved).execute()
    else await insert(tx).execute()
  }
  if (dialect === 'sqlite') await chainHeadUpsert(tx, moved).execute()
  return written
}

/** unsignedTipRefusal; keyless, over the rows not yet read (see UnsignedSeen). */
async function overSignedRows(
  tx: Kysely<Database>,
  tipSeq: number,
  keyring: AuditKeyring | null,
  seen: UnsignedSeen,
  last: { readonly seq: number; readonly hash: string } | undefined,
): ReturnType<typeof unsignedTipRefusal> {
  if (keyring !== null) return unsignedTipRefusal(tx, tipSeq, keyring)
  // a chain shorter than this process read it (rows removed, a store restored): read it whole again
  if (seen.upTo > tipSeq) seen.upTo = 0
  // the last row is the one this process's latest append wrote over what it had read: its own rows, unsigned
  const mine = seen.mine
  if (mine !== undefined && seen.upTo === mine.from && last?.seq === tipSeq && last.seq === mine.seq && last.hash === mine.hash) seen.upTo = tipSeq
  const refusal = await unsignedTipRefusal(tx, tipSeq, null, { after: seen.upTo })
  if (refusal === null) seen.upTo = tipSeq
  return refusal
}

const RETRYABLE_CODES = new Set([
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_LOCKED',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  '23505', // unique_violation: a seq taken by a writer that did not hold the lock
  '40001', // serialization_failure
  '40P01', // deadlock_detected
])

function isRetryable(error: unknown): boolean {
  // the store's busy refusal keeps SQLite's code: a plain SQLITE_BUSY has already waited the whole busy timeout,
  // with the event loop blocked, and waiting it out seven times more made one request take 50 s
  if (isWarrantError(error)) {
    const code = (error.details as { reason?: unknown; driver_code?: unknown } | undefined)?.driver_code
    return error.code === 'store_unavailable' && typeof code === 'string' && code !== 'SQLITE_BUSY' && RETRYABLE_CODES.has(code)
  }
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && RETRYABLE_CODES.has(code)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
