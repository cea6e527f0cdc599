import { sql, type Kysely } from 'kysely'
import { immediateTransaction } from './immediate-transaction.js'
import type { StoreDialect } from './store.js'

/**
 * Runs `work` in a transaction holding a lock named by `space` and `key` that every process sharing the store
 * respects (gateway instances, CLI commands): on PostgreSQL a transaction advisory lock on (space, hash of
 * key), released at commit or rollback; on SQLite the database's write lock taken up front (BEGIN IMMEDIATE),
 * the only lock SQLite shares between processes (coarser: it serialises every writer, so `work` stays short).
 * `work` runs on the connection it is given; on SQLite anything sent to the store's own `db` meanwhile waits.
 *
 * Used for "look up, else create" steps that must create one object under concurrency: the lookup and the
 * insert both happen inside `work`.
 *
 * @example await withKeyedLock(store, PROPOSAL_LOCK_SPACE, selectionId, async (trx) => (await find(trx)) ?? insert(trx))
 */
export function withKeyedLock<DB, T>(
  store: { readonly dialect: StoreDialect; readonly db: Kysely<DB> },
  space: number,
  key: string,
  work: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  if (store.dialect === 'postgres')
    return store.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${space}, hashtext(${key}))`.execute(trx)
      return work(trx)
    })
  return immediateTransaction(store.db, work)
}
