import { performance } from 'node:perf_hooks'
import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { isBusy } from './sqlite-busy.js'
import type { StoreLog } from './store.js'

/**
 * The SQLite store connection as kysely sees it, each statement that fails (prepared or run) logged as "store
 * query failed" with its SQL and how long it ran, its parameters left out (they carry record fields and token
 * hashes), and the error thrown on as it was. Kysely's own `log` option does the same for every dialect, but by
 * wrapping each statement in three more promises whether it fails or not (an async wrapper awaiting an async
 * logger whose level is off), which the executor paid several times a target; here a statement that succeeds
 * costs a clock reading. PostgreSQL keeps kysely's logging (its statements wait on a socket anyway).
 */
export function loggingFailures(inner: SqliteDatabase, log: StoreLog): SqliteDatabase {
  const logged = <T>(sql: string, work: () => T): T => {
    const started = performance.now()
    try {
      return work()
    } catch (error) {
      // a lock another connection holds is no failure yet: the dialect waits and runs it again (BusyWaitingSqliteDialect),
      // and past the wait refuses it as 503 store_unavailable, which the surfaces log
      if (!isBusy(error)) log.error({ err: error, sql, durationMs: performance.now() - started }, 'store query failed')
      throw error
    }
  }
  const wrapped = new WeakMap<SqliteStatement, SqliteStatement>()
  return {
    close: () => inner.close(),
    prepare(sql) {
      const statement = logged(sql, () => inner.prepare(sql))
      let outer = wrapped.get(statement)
      if (outer === undefined) {
        outer = {
          reader: statement.reader,
          all: (parameters) => logged(sql, () => statement.all(parameters)),
          iterate: (parameters) => loggingIterator(sql, logged(sql, () => statement.iterate(parameters)), logged),
          run: (parameters) => logged(sql, () => statement.run(parameters)),
        }
        wrapped.set(statement, outer)
      }
      return outer
    },
  }
}

function* loggingIterator<T>(sql: string, rows: IterableIterator<T>, logged: <R>(sql: string, work: () => R) => R): IterableIterator<T> {
  for (;;) {
    const next = logged(sql, () => rows.next())
    if (next.done) return
    yield next.value
  }
}
