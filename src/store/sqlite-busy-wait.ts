import { SqliteDialect } from 'kysely'
import type { Driver, SqliteDialectConfig } from 'kysely'
import { busyWaitingDriver } from '../contract/index.js'
import { busyRefusal } from './sqlite-busy.js'

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
 * again after short growing pauses (timers) until that much time has gone, where running it again is safe (see
 * `busyWaitingDriver`, shared with the SQL connector's SQLite upstream), then refused as before (`busyRefusal`: 503
 * `store_unavailable`, same details). Statements run on the raw handle (`Store.sqlite`) bypass this: a transaction
 * that runs them begins IMMEDIATE through kysely, taking the write lock here first (see `unsyncedSqliteCommit`).
 */
export class BusyWaitingSqliteDialect extends SqliteDialect {
  readonly #options: BusyWaitOptions

  constructor(config: SqliteDialectConfig, options: BusyWaitOptions) {
    super(config)
    this.#options = options
  }

  override createDriver(): Driver {
    const { inTransaction, display, timeoutMs } = this.#options
    return busyWaitingDriver(super.createDriver(), { inTransaction, timeoutMs, refuse: (error, waitedMs) => busyRefusal(error, display, timeoutMs, waitedMs) })
  }
}
