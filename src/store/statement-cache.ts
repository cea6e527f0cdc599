import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase } from 'kysely'
import { preparedOnce } from '../contract/index.js'

/**
 * The SQLite store connection as kysely sees it, each statement prepared once per SQL text (see `preparedOnce`).
 * Kysely prepares every query it runs; on the executor's hot path (window claims, outcomes, audit appends: the
 * same few statements thousands of times) preparing cost about as much as running.
 *
 * @example new SqliteDialect({ database: cachingStatements(new BetterSqlite3('warrant.db')) })
 */
export function cachingStatements(database: BetterSqlite3.Database): SqliteDatabase {
  const prepare = preparedOnce((text) => database.prepare(text))
  return {
    close: () => void database.close(),
    prepare,
  }
}
