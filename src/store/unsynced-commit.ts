import { sql, type Kysely } from 'kysely'
import { immediateTransaction } from './immediate-transaction.js'

/**
 * Runs `work` in a transaction on a SQLite store whose commit does not wait for the disk (`synchronous=NORMAL`
 * for that one commit), then puts the connection back to `synchronous=FULL`, whatever `work` did.
 *
 * Why this is safe where it is used: in WAL mode every commit appends to one file, and a commit at FULL syncs
 * that file, so it makes every earlier commit durable with it; and after a power failure SQLite recovers a
 * prefix of the commits (each WAL frame is checksummed, recovery stops at the first bad one). An unsynced commit
 * can therefore only be lost together with everything committed after it: the store looks as if the process had
 * stopped just before it. The ledger uses this for a window's outcomes alone, never for an `in_flight` mark: the
 * next mark's synced commit (before its upstream call) or any other commit of the store makes the outcomes
 * durable, and a lost outcome leaves its target `in_flight`, which recovery already reads again and judges.
 * What it saves: one sync per outcome group (4 ms each on a busy 2-core machine), taken on the event loop,
 * since better-sqlite3 commits synchronously.
 *
 * Kysely runs every SQLite query on one connection behind a mutex that `connection()` holds for the whole
 * callback: no other caller's commit can run between the two settings and find the connection unsynced. The
 * transaction begins IMMEDIATE: the write lock is taken by its BEGIN, which the store's connection waits for on
 * timers (BusyWaitingSqliteDialect), so `work` may write through the raw handle (`Store.sqlite`, past that
 * waiting, at busy_timeout 0) and never be refused busy on its first write.
 *
 * @example await unsyncedSqliteCommit(store.db, async (trx) => { await recordOutcomes(trx) })
 */
export function unsyncedSqliteCommit<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    // The argument above holds in WAL mode only (a rollback journal at NORMAL can lose more than a suffix): where
    // the store could not switch to WAL (a filesystem without shared memory), every commit stays synced.
    const mode = (await sql<{ journal_mode: string }>`pragma journal_mode`.execute(conn)).rows[0]?.journal_mode
    if (String(mode).toLowerCase() !== 'wal') return await immediateTransaction(conn, work)
    // SQLite refuses to change the setting inside a transaction: before BEGIN, and back after COMMIT or ROLLBACK
    await sql`pragma synchronous = normal`.execute(conn)
    try {
      return await immediateTransaction(conn, work)
    } finally {
      await sql`pragma synchronous = full`.execute(conn)
    }
  })
}

/**
 * Runs `work` in a transaction on a SQLite store that commits at `synchronous=FULL`, set again just before
 * BEGIN: a transaction whose durability a promise rests on (an `in_flight` mark before its upstream call) does
 * not depend on every earlier {@link unsyncedSqliteCommit} having put the setting back.
 *
 * @example await syncedSqliteCommit(store.db, async (trx) => { await markInFlight(trx) })
 */
export function syncedSqliteCommit<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`pragma synchronous = full`.execute(conn)
    return await immediateTransaction(conn, work)
  })
}
