import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase } from 'kysely'

/** Statements kept per SQLite store connection, least recently used dropped first. */
const MAX_STATEMENTS = 256

/**
 * The SQLite store connection as kysely sees it, each statement prepared once per SQL text. Kysely prepares
 * every query it runs; on the executor's hot path (window claims, outcomes, audit appends: the same few
 * statements thousands of times) preparing cost about as much as running. A statement still being iterated (a
 * streamed read) is busy, and the same text then gets a fresh one.
 *
 * @example new SqliteDialect({ database: cachingStatements(new BetterSqlite3('warrant.db')) })
 */
export function cachingStatements(database: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>()
  return {
    close: () => void database.close(),
    prepare(sql) {
      const cached = cache.get(sql)
      if (cached !== undefined) {
        // re-inserted: a Map iterates in insertion order, so the first key is the least recently used
        cache.delete(sql)
        cache.set(sql, cached)
        return cached.busy ? database.prepare(sql) : cached
      }
      const statement = database.prepare(sql)
      cache.set(sql, statement)
      if (cache.size > MAX_STATEMENTS) cache.delete(cache.keys().next().value!)
      return statement
    },
  }
}
