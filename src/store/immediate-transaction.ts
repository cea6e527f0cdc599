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
