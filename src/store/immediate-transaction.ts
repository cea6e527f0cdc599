import { sql, type Kysely } from 'kysely'

/**
 * Runs `work` in a SQLite transaction that takes the database's write lock up front (BEGIN IMMEDIATE). Kysely
 * runs every query on one connection behind a mutex that `connection()` holds for the whole callback, which
 * serialises this process; the immediate lock serialises other processes, which wait for it up to the busy
 * timeout. A deferred transaction that reads and then writes would instead fail with "database is locked".
 *
 * @example await immediateTransaction(store.db, async (conn) => { const tip = await readTip(conn); await append(conn, tip) })
 */
export function immediateTransaction<DB, T>(db: Kysely<DB>, work: (conn: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn)
    try {
      const result = await work(conn)
      await sql`commit`.execute(conn)
      return result
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => undefined)
      throw error
    }
  })
}

/**
 * A transaction that reads and then writes: on SQLite it takes the write lock up front (`immediateTransaction`), on
 * PostgreSQL it is a plain transaction (its own locks, `for update`, hold the rest). A deferred SQLite transaction
 * that read first was refused at once when it came to write after another process (a CLI command beside `warrant
 * serve`) had written meanwhile (SQLITE_BUSY_SNAPSHOT): waiting could not help, so SQLite did not wait.
 *
 * @example await writingTransaction(store, async (trx) => { if (!(await taken(trx))) await insert(trx) })
 */
export function writingTransaction<DB, T>(store: { readonly dialect: 'sqlite' | 'postgres'; readonly db: Kysely<DB> }, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return store.dialect === 'postgres' ? store.db.transaction().execute(work) : immediateTransaction(store.db, work)
}
