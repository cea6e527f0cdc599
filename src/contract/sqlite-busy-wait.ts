import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely'

/*
 * Shared by the store (its SQLite file) and the SQL connector (a SQLite upstream), which may import nothing of each
 * other: the contract is the one module both import (as file-identity.ts). Timers only, no I/O of its own; kysely's
 * types only, no kysely code.
 */

/** The first pause after a busy answer, and the longest: short next to a request, long next to a statement. */
const FIRST_PAUSE_MS = 1
const LONGEST_PAUSE_MS = 25

/** The busy answers SQLite's busy handler waits on (the lock held, a WAL being recovered); not a stale snapshot. */
const WAITABLE = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_TIMEOUT'])

/** What thrown for the error a wait ends on: busy past the wait, busy where running again is unsafe, any other. */
export type BusyRefusal = (error: unknown, waitedMs?: number) => unknown

/**
 * Runs `attempt` (one statement on a SQLite connection at busy_timeout 0) until it is not refused busy, or
 * `mayRunAgain` (asked after the refusal) says running it again is unsafe, or `timeoutMs` has gone: then throws
 * `refuse(error, waited)`. Between attempts it pauses on timers, 1 ms doubled up to 25 ms, so the event loop serves
 * everything else while the other connection holds its lock; better-sqlite3's own busy_timeout slept synchronously.
 */
export async function whileBusy<T>(attempt: () => T | Promise<T>, mayRunAgain: () => boolean, timeoutMs: number, refuse: BusyRefusal): Promise<T> {
  const started = performance.now()
  let pause = FIRST_PAUSE_MS
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      const waited = performance.now() - started
      const code = (error as { code?: unknown } | null)?.code
      if (typeof code !== 'string' || !WAITABLE.has(code) || !mayRunAgain() || waited >= timeoutMs) throw refuse(error, waited)
      await sleep(Math.min(pause, timeoutMs - waited))
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS)
    }
  }
}

/** What the waiting needs to know of the connection: whether it is in a transaction now, the wait, the refusal. */
export interface BusyWaitOptions {
  /** Whether the connection is inside a transaction now (better-sqlite3's `inTransaction`). */
  readonly inTransaction: () => boolean
  readonly timeoutMs: number
  readonly refuse: BusyRefusal
}

/** A plain deferred BEGIN: the transaction holds no lock and no snapshot until its first statement. */
const DEFERRED_BEGIN = /^\s*begin(\s+deferred)?(\s+transaction)?\s*;?\s*$/i
const COMMIT = /^\s*(commit|end)(\s+transaction)?\s*;?\s*$/i

/**
 * A kysely SQLite driver (one connection at busy_timeout 0) whose statements wait for another connection's lock on
 * timers (`whileBusy`). Kysely's mutex is held meanwhile, so this process's other work on the connection queues
 * behind it as it did; only the event loop is free.
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
 * to write would wait on each other.
 */
export function busyWaitingDriver(inner: Driver, options: BusyWaitOptions): Driver {
  const connections = new WeakMap<DatabaseConnection, DatabaseConnection>()
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

function busyWaiting(inner: DatabaseConnection, options: BusyWaitOptions): DatabaseConnection {
  // true from a deferred BEGIN until the next statement: that statement is the transaction's first
  let fresh = false
  /** Runs `attempt` until it is not refused busy where running again is safe, or the wait is over. */
  const waiting = async <T>(query: CompiledQuery, attempt: () => Promise<T>): Promise<T> => {
    const wasInTransaction = options.inTransaction()
    const again = !wasInTransaction || fresh || COMMIT.test(query.sql)
    fresh = false
    const result = await whileBusy(attempt, () => again && options.inTransaction() === wasInTransaction, options.timeoutMs, options.refuse)
    fresh = DEFERRED_BEGIN.test(query.sql)
    return result
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
        throw options.refuse(error)
      } finally {
        // a consumer that stops early ends the statement's iteration too
        await rows!.return?.(undefined)
      }
    },
  }
}
