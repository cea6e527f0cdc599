import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely'
import type { IsoTimestamp } from './schema.js'

/**
 * Whose clock a lease or an expiry is read and written on. A lease (an operation's `lease_expires_at`, a building
 * selection's `lease_until`) is one process's claim that others must see live until it ends, and an expiry (an
 * approval's, a selection's, a token's, a review session's) is a promise that the thing lasts that long and no longer,
 * whichever instance is asked: every process must read and write them on one clock.
 *
 * - PostgreSQL, shared by instances on several machines: the database's. Each process's own clock disagreed with
 *   the others': one running a minute ahead took a live lease at once (declaring the holder's applied write
 *   `unknown`), and one running behind wrote leases that had already ended for everyone else. The statement's
 *   time is read in the statement itself (`statement_timestamp()`, the same for every row it touches), written
 *   and compared as the same ISO text the columns hold.
 * - SQLite: one file, one machine, one clock: the process's (`localNow`, the injected clock tests pin and move).
 *
 * A process still needs its own deadline (the executor starts no write after it): the time it sent the claim or
 * renewal plus the lease, on its own clock. That uses only how fast its clock runs, not what it reads, and ends
 * no later than the store's lease, which began when the statement ran, after it was sent.
 */

// `to_char` of UTC time with milliseconds: the text `Date.prototype.toISOString` writes
const ISO_TEXT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`

/** A store's kysely, or a transaction on it: its adapter says which database it speaks to. */
type StoreHandle = Pick<Kysely<unknown>, 'getExecutor'>

function onPostgres(db: StoreHandle): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** Now, as a lease is judged against: the database's time on PostgreSQL, else `localNow`. */
export function leaseNow(db: StoreHandle, localNow: IsoTimestamp): IsoTimestamp | RawBuilder<IsoTimestamp> {
  if (!onPostgres(db)) return localNow
  return sql<IsoTimestamp>`to_char(statement_timestamp() at time zone 'UTC', ${sql.raw(ISO_TEXT)})`
}

/** The end of a lease taken or renewed now for `leaseMs`: on the database's time on PostgreSQL, else on `localNow`'s. */
export function leaseEnd(db: StoreHandle, localNow: IsoTimestamp, leaseMs: number): IsoTimestamp | RawBuilder<IsoTimestamp> {
  if (!onPostgres(db)) return new Date(Date.parse(localNow) + leaseMs).toISOString()
  return sql<IsoTimestamp>`to_char((statement_timestamp() + cast(${Math.round(leaseMs)} as double precision) * interval '1 millisecond') at time zone 'UTC', ${sql.raw(ISO_TEXT)})`
}

/**
 * Now as `leaseNow` says, as a column of a statement that runs anyway (the store's time costs no round trip of its
 * own): on SQLite `localNow` is bound as a parameter and read back as it is.
 *
 * @example const row = await db.selectFrom('plans').selectAll().select(storeNowColumn(db, store.now()).as('store_now')).where('id', '=', id).executeTakeFirst()
 */
export function storeNowColumn(db: StoreHandle, localNow: IsoTimestamp): RawBuilder<IsoTimestamp> {
  const now = leaseNow(db, localNow)
  return typeof now === 'string' ? sql<IsoTimestamp>`${now}` : now
}
