import type BetterSqlite3 from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

const handles = new WeakMap<Kysely<Database>, BetterSqlite3.Database>()

/**
 * The one SQLite connection under a store's kysely handle (`Store.sqlite`), for a module handed only the kysely
 * handle (the operations ledger). The same rules as `Store.sqlite`: only inside a transaction of that handle, which
 * holds the connection's mutex and has issued BEGIN, so what is written commits (or rolls back) with it.
 */
export function sqliteHandleOf(db: Kysely<Database>): BetterSqlite3.Database | undefined {
  return handles.get(db)
}

/** Called once by `createStore` for a SQLite store. */
export function registerSqliteHandle(db: Kysely<Database>, sqlite: BetterSqlite3.Database): void {
  handles.set(db, sqlite)
}
