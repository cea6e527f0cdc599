import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { SqliteDialect } from 'kysely'
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, SqliteDialectConfig } from 'kysely'
import { busyRefusal, isBusy } from './sqlite-busy.js'
import { codeOf } from './store-refusal.js'

/** The first pause after a busy answer, and the longest: short next to a request, long next to a statement. */
const FIRST_PAUSE_MS = 1
const LONGEST_PAUSE_MS = 25

/** What the waiting needs to know of the store: its one connection, its name for refusals, the configured wait. */
export interface BusyWaitOptions {
  /** Whether the connection is inside a transaction now (better-sqlite3's `inTransaction`). */
  readonly inTransaction: () => boolean
  readonly display: string
  readonly timeoutMs: number
}

/**
 * The SQLite dialect whose connection waits for another connection's lock without stopping the event loop. The
 * store runs at busy_timeout 0: SQLite answers SQLITE_BUSY at once instead of sleeping inside better-sqlite3 (which
 * stopped /health, every request and the lease-renewal timer for up to store.busy_timeout_ms). The statement is run
 * again after short growing pauses (timers) until that much time has gone, then refused as before (`busyRefusal`:
 * 503 `store_unavailable`, same details). Kysely's mutex is held meanwhile, so this process's other store work
 * queues behind it as it did; only the event loop is free.
 *
 * Run again only where SQLite's own busy handler would have waited, where the statement that met the lock did
 * nothing and nothing before it in its transaction can be repeated or go stale:
 * - outside a transaction: BEGIN IMMEDIATE / BEGIN (nothing begun when refused), an autocommit statement (rolled back
 *   whole). If the connection is in a transaction after the refusal, it is not run again.
 * - COMMIT: SQLite keeps the transaction open when COMMIT is busy (it waited for readers in a rollback journal), and
 *   documents running it again; not if the transaction is gone after the refusal.
 * - the first statement of a deferred transaction (nothing run since BEGIN through this connection): it holds no
 *   snapshot yet, so this is the autocommit case; the transaction must still be open after the refusal.
 * Anything else inside a transaction (a transaction that read and comes to write, SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED)
 * is refused at once, as SQLite itself does: waiting cannot help, and in a rollback journal two readers each waiting
 * to write would wait on each other. Statements run on the raw handle (`Store.sqlite`) bypass this: a transaction
 * that runs them takes the write lock through kysely first (see `claimWriteLock`).
 */
export class BusyWaitingSqliteDialect extends SqliteDialect {
  readonly #options: BusyWaitOptions

  constructor(config: SqliteDialectConfig, options: BusyWaitOptions) {
    super(config)
    this.#options = options
  }

  override createDriver(): Driver {
    const inner = super.createDriver()
    const connections = new WeakMap<DatabaseConnection, DatabaseConnection>()
    const options = this.#options
    return {
      init: () => inner.init(),
      async acquireConnection() {
        const connection = await inner.acquireConnection()
        let outer = connections.get(connection)
        if (outer === undefined) connections.set(connection, (outer = busyWaiting(connection, options)))
        return outer
      },
      beginTransaction: (connection, settings) => inner.beginTransaction(connection, settings),
      commitTransaction: (connection) => inner.commitTransaction(connection),
      rollbackTransaction: (connection) => inner.rollbackTransaction(connection),
      savepoint: (connection, name, compile) => inner.savepoint!(connection, name, compile),
      rollbackToSavepoint: (connection, name, compile) => inner.rollbackToSavepoint!(connection, name, compile),
      releaseSavepoint: (connection, name, compile) => inner.releaseSavepoint!(connection, name, compile),
      releaseConnection: (connection) => inner.releaseConnection(connection),
      destroy: () => inner.destroy(),
    }
  }
}

/** A plain deferred BEGIN: the transaction holds no lock and no snapshot until its first statement. */
const DEFERRED_BEGIN = /^\s*begin(\s+deferred)?(\s+transaction)?\s*;?\s*$/i
const COMMIT = /^\s*(commit|end)(\s+transaction)?\s*;?\s*$/i
/** The busy answers SQLite's busy handler waits on (the lock held, a WAL being recovered); not a stale snapshot. */
const WAITABLE = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_TIMEOUT'])

function busyWaiting(inner: DatabaseConnection, options: BusyWaitOptions): DatabaseConnection {
  // true from a deferred BEGIN until the next statement: that statement is the transaction's first
  let fresh = false
  /** Runs `attempt` until it is not refused busy where running again is safe, or the wait is over. */
  const waiting = async <T>(query: CompiledQuery, attempt: () => Promise<T>): Promise<T> => {
    const wasInTransaction = options.inTransaction()
    const again = !wasInTransaction || fresh || COMMIT.test(query.sql)
    fresh = false
    const started = performance.now()
    let pause = FIRST_PAUSE_MS
    for (;;) {
      try {
        const result = await attempt()
        fresh = DEFERRED_BEGIN.test(query.sql)
        return result
      } catch (error) {
        const waited = performance.now() - started
        const waitable = again && isBusy(error) && WAITABLE.has(codeOf(error) ?? '') && options.inTransaction() === wasInTransaction
        if (!waitable || waited >= options.timeoutMs) throw busyRefusal(error, options.display, options.timeoutMs, waited)
        await sleep(Math.min(pause, options.timeoutMs - waited))
        pause = Math.min(pause * 2, LONGEST_PAUSE_MS)
      }
    }
  }
  return {
    executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> => waiting(query, async () => inner.executeQuery<R>(query)),
    async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
      // waits for the lock before the first row only: a stream refused later has handed rows out already
      let rows: AsyncIterableIterator<QueryResult<R>> | undefined
      const first = await waiting(query, async () => {
        rows = inner.streamQuery<R>(query, chunkSize)
        return rows.next()
      })
      if (first.done) return
      try {
        yield first.value
        for (;;) {
          const next = await rows!.next()
          if (next.done) return
          yield next.value
        }
      } catch (error) {
        throw busyRefusal(error, options.display, options.timeoutMs)
      } finally {
        // a consumer that stops early ends the statement's iteration too
        await rows!.return?.(undefined)
      }
    },
  }
}
