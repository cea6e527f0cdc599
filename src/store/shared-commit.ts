import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

/**
 * Rows one module holds ready to write that may join a transaction another module commits anyway. On a
 * SQLite store every commit is a sync of the file under `synchronous=FULL`, on the one connection every caller
 * shares: the operations ledger commits once per window of targets, and the audit log's call rows for that
 * window's upstream requests committed on their own besides, two or three syncs per window where one holds
 * both. Written in the same transaction, a target's outcome and the audit row of the request that decided it
 * are durable together, or neither is. The interface lives in the store, so the module that commits (operations)
 * and the module that joins (audit) stay independent of each other.
 */
export interface CommitJoiner {
  /**
   * Writes what waits inside `trx` (a transaction that already holds the store's write lock); null when nothing
   * waits or it cannot join now. A failure inside must leave `trx` usable: the joiner undoes its own writes.
   */
  join(trx: Kysely<Database>): Promise<JoinedWrites | null>
}

/** What the committing module tells the joiner once its transaction has ended. */
export interface JoinedWrites {
  /** The transaction committed: the joined rows are durable. */
  committed(): void
  /** The transaction rolled back: the joined rows were not written and must be written another way. */
  rolledBack(error: unknown): void
}

const joiners = new WeakMap<Kysely<Database>, CommitJoiner>()

/**
 * Offers `joiner` every transaction that commits anyway on the store handle `db`; returns how to withdraw it.
 *
 * @example
 * const withdraw = joinCommits(store.db, { join: async (trx) => writeQueued(trx) })
 */
export function joinCommits(db: Kysely<Database>, joiner: CommitJoiner): () => void {
  joiners.set(db, joiner)
  return () => {
    if (joiners.get(db) === joiner) joiners.delete(db)
  }
}

/** The joiner offered the transactions of `db`, if any. */
export function commitJoinerOf(db: Kysely<Database>): CommitJoiner | undefined {
  return joiners.get(db)
}
