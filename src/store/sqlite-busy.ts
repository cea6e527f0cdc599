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
 * A SQLite failure as the store's refusal: the busy ones (see `isBusy`) are 503 `store_unavailable` saying the store
 * is busy and which key sets the wait (it was a 500 "internal error", a bug it is not); others stay as they are.
 * `details.driver_code` keeps SQLite's code (a plain SQLITE_BUSY met past `waitedMs` ≥ the timeout has waited it out;
 * the others have not). The store's connection waits before it refuses (see BusyWaitingSqliteDialect).
 */
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
