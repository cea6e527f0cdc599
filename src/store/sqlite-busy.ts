import { performance } from 'node:perf_hooks'
import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { WarrantError } from '../contract/index.js'
import { codeOf } from './store-refusal.js'

/** How long a SQLite store statement waits for another connection's lock by default (`store.busy_timeout_ms`). */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000

/** SQLite's "another connection holds the lock" (SQLITE_BUSY and its extended codes, SQLITE_LOCKED). */
export function isBusy(error: unknown): boolean {
  const code = codeOf(error)
  return code !== null && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

/**
 * The SQLite store connection as kysely sees it, a statement refused for a lock another connection held (past the
 * busy timeout, or at once where waiting could not help) turned into 503 `store_unavailable` saying the store is
 * busy and which key sets the wait: it was a 500 "internal error", a bug it is not. `details.driver_code` keeps
 * SQLite's code (a plain SQLITE_BUSY has already waited the whole timeout; the others have not).
 */
export function busyRefusing(inner: SqliteDatabase, display: string, timeoutMs: number): SqliteDatabase {
  const refused = <T>(work: () => T): T => {
    const started = performance.now()
    try {
      return work()
    } catch (error) {
      throw busyRefusal(error, display, timeoutMs, performance.now() - started)
    }
  }
  const wrapped = new WeakMap<SqliteStatement, SqliteStatement>()
  return {
    close: () => inner.close(),
    prepare(sql) {
      const statement = refused(() => inner.prepare(sql))
      let outer = wrapped.get(statement)
      if (outer === undefined) {
        outer = {
          reader: statement.reader,
          all: (parameters) => refused(() => statement.all(parameters)),
          iterate: (parameters) => refusingIterator(refused(() => statement.iterate(parameters)), refused),
          run: (parameters) => refused(() => statement.run(parameters)),
        }
        wrapped.set(statement, outer)
      }
      return outer
    },
  }
}

/** A SQLite failure as the store's refusal: the busy ones (see `isBusy`) are `store_unavailable`, others stay as they are. */
export function busyRefusal(error: unknown, display: string, timeoutMs: number, waitedMs?: number): unknown {
  if (!isBusy(error)) return error
  const code = codeOf(error)
  // SQLite waits the timeout out only where waiting can help: a transaction that read first and comes to write
  // while another connection writes (or wrote since it began reading) is refused at once, code plain or not
  const waited = code === 'SQLITE_BUSY' && (waitedMs === undefined || waitedMs >= timeoutMs * 0.9)
  const why = waited
    ? `another connection (a CLI command, a backup, a sqlite3 shell in a transaction) held its lock past store.busy_timeout_ms (${timeoutMs} ms); retry once it lets go`
    : code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT'
      ? 'another connection wrote to it while this transaction, which had read first, came to write: SQLite refuses that at once, since waiting cannot help; retry'
      : `another connection held a lock SQLite does not wait for (${code}); retry`
  return new WarrantError('store_unavailable', `the SQLite store "${display}" is busy: ${why}`, { store: display, reason: 'busy', driver_code: code, busy_timeout_ms: timeoutMs })
}

function* refusingIterator<T>(rows: IterableIterator<T>, refused: <R>(work: () => R) => R): IterableIterator<T> {
  for (;;) {
    const next = refused(() => rows.next())
    if (next.done) return
    yield next.value
  }
}
