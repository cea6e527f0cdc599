import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely } from 'kysely'
import type { Dialect, LogEvent, SqliteDatabase } from 'kysely'
import { openPinned, WarrantError } from '../contract/index.js'
import { migrateToLatest } from './migrations.js'
import type { MigrationOutcome } from './migrations.js'
import type { Database, IsoTimestamp } from './schema.js'
import { cachingStatements } from './statement-cache.js'
import { EventLoopSlices } from './event-loop-slices.js'
import { loggingFailures } from './failure-log.js'
import { checkedStatements, watchStoreFile, type StoreFile } from './store-file.js'
import { parseStoreUrl } from './store-url.js'
import { postgresHealth } from './postgres-health.js'
import { busyRefusal, DEFAULT_SQLITE_BUSY_TIMEOUT_MS } from './sqlite-busy.js'
import { BusyWaitingSqliteDialect } from './sqlite-busy-wait.js'
import { registerRegexp } from './sqlite-regexp.js'
import { registerSqliteHandle } from './sqlite-handle.js'
import { openPostgres } from './postgres-pool.js'
import type { StoreLocation } from './store-url.js'

export type StoreDialect = 'sqlite' | 'postgres'

/** The few log methods the store uses; a pino logger fits. */
export interface StoreLog {
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
}

export interface StoreOptions {
  /** `sqlite:./data/warrant.db`, `sqlite::memory:`, `sqlite:/abs/warrant.db` or `postgres://user@host:5432/db` */
  readonly url: string
  readonly log?: StoreLog
  /** source of `now()`; tests pin it to make expiry deterministic */
  readonly clock?: () => Date
  /** PostgreSQL pool size; default 10 */
  readonly maxConnections?: number
  /** SQLite: how long a statement waits for another connection's lock before it is refused as busy; default 5000 */
  readonly busyTimeoutMs?: number | undefined
  /** PostgreSQL: how long opening a connection, or waiting for a free one, may take before the store is refused; default 10000 */
  readonly connectTimeoutMs?: number | undefined
  /** PostgreSQL: how long the answer to one statement may take before the store is refused and the connection dropped; default 300000 */
  readonly statementTimeoutMs?: number | undefined
}

/** The database handle every service receives. */
export interface Store {
  readonly db: Kysely<Database>
  readonly dialect: StoreDialect
  /** the store URL with any password masked, for logs */
  readonly url: string
  /**
   * The one SQLite connection kysely runs on (null on PostgreSQL), for bulk writes through statements
   * prepared once: use it only inside a kysely transaction, which holds that connection's mutex and has
   * issued BEGIN, so the rows commit with it and nothing else runs in between.
   */
  readonly sqlite: BetterSqlite3.Database | null
  /**
   * A failure of a statement run on `sqlite` directly, as the refusal the same statement run through `db` gets
   * (a lock held past the busy timeout: 503 `store_unavailable` naming store.busy_timeout_ms); others as they are.
   * Judge it where the bulk work ends (its transaction), never per row.
   */
  refusalOf(error: unknown): unknown
  /**
   * Null while the store can be used; else why not, as the refusal every statement now gets: the SQLite file
   * opened is no longer at its path (removed or replaced), which is for good (see store-file.ts). Takes a stat.
   */
  unavailable(): WarrantError | null
  /**
   * Null when the store answers now; else why not, as a `store_unavailable` refusal: `unavailable()` on SQLite,
   * one trivial query within a short timeout on PostgreSQL (a database dropped, a server down or silent). For /health.
   */
  reachable(): Promise<WarrantError | null>
  /** apply pending migrations; a failure is in the result, not thrown */
  migrate(): Promise<MigrationOutcome>
  /** the current time as an ISO-8601 UTC timestamp, the form every timestamp column holds */
  now(): IsoTimestamp
  /** release the connection(s); safe to call more than once */
  close(): Promise<void>
}

/** Longest run of SQLite store statements before the event loop gets a turn. */
const SQLITE_SLICE_MS = 10

/**
 * Open the store named by a URL. Does not migrate: call `migrate()` (the server does at startup).
 *
 * @example
 * const store = await createStore({ url: 'sqlite:./data/warrant.db' })
 * const { error } = await store.migrate()
 * const rows = await store.db.selectFrom('plans').selectAll().where('state', '=', 'pending').execute()
 * await store.close()
 *
 * @throws InvalidStoreUrlError for a bad URL; Error naming the (masked) URL when the database cannot be opened.
 */
export async function createStore(options: StoreOptions): Promise<Store> {
  const location = parseStoreUrl(options.url)
  const clock = options.clock ?? (() => new Date())
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS
  const opened = location.dialect === 'sqlite' ? openSqlite(location, options.log) : null
  const sqlite = opened?.database ?? null
  // a lock another connection holds is waited for on timers, the event loop free meanwhile (see BusyWaitingSqliteDialect);
  // a failed statement is logged by the connection itself (see loggingFailures), not by kysely's `log`
  const statements = opened && sqliteStatements(opened.database, opened.file)
  const dialect: Dialect = location.dialect === 'sqlite'
    ? new BusyWaitingSqliteDialect({ database: options.log ? loggingFailures(statements!, options.log) : statements! }, { inTransaction: () => opened!.database.inTransaction, display: location.display, timeoutMs: busyTimeoutMs })
    : await openPostgres(location.connectionString, location.display, options)
  const health = location.dialect === 'postgres' ? postgresHealth(location.connectionString, location.display) : null
  // A SQLite store never hands the event loop back by itself (see EventLoopSlices); PostgreSQL waits on sockets.
  const plugins = location.dialect === 'sqlite' ? [new EventLoopSlices(SQLITE_SLICE_MS)] : []
  const db = new Kysely<Database>({ dialect, plugins, ...(options.log && location.dialect === 'postgres' ? { log: logQueryErrors(options.log) } : {}) })
  if (sqlite) registerSqliteHandle(db, sqlite)

  let closing: Promise<void> | undefined
  return {
    db,
    dialect: location.dialect,
    url: location.display,
    sqlite,
    refusalOf: (error) => (location.dialect === 'sqlite' ? busyRefusal(error, location.display, busyTimeoutMs) : error),
    unavailable: () => opened?.file?.unavailable() ?? null,
    reachable: async () => (health ? health.check() : (opened?.file?.unavailable() ?? null)),
    migrate: async () => {
      const outcome = await migrateToLatest({ db })
      if (outcome.error) options.log?.error({ err: outcome.error.cause, store: location.display }, outcome.error.message)
      else if (outcome.applied.length > 0) options.log?.info({ applied: outcome.applied, store: location.display }, 'store migrated')
      return outcome
    },
    now: () => clock().toISOString(),
    close: () => (closing ??= Promise.all([db.destroy(), health?.close()]).then(() => undefined)),
  }
}

/** Statements prepared once, each checked against the file opened (none for an in-memory store). */
function sqliteStatements(database: BetterSqlite3.Database, file: StoreFile | null): SqliteDatabase {
  const cached = cachingStatements(database)
  return file === null ? cached : checkedStatements(cached, database, file)
}

function openSqlite(location: Extract<StoreLocation, { dialect: 'sqlite' }>, log: StoreLog | undefined): { database: BetterSqlite3.Database; file: StoreFile | null } {
  let database: BetterSqlite3.Database
  let file: StoreFile | null = null
  const unopenable = (cause: unknown) => new WarrantError('store_unavailable', `cannot open SQLite store "${location.display}": ${messageOf(cause)}`, { store: location.display })
  try {
    if (location.memory) database = new BetterSqlite3(':memory:')
    else {
      const path = resolve(location.filename)
      mkdirSync(dirname(path), { recursive: true })
      // the file this handle is on, to notice when it is no longer the one at the path (store-file.ts)
      const pinned = openPinned(path, () => new BetterSqlite3(path), () => unopenable(new Error('the file was moved or removed while it was being opened')))
      database = pinned.database
      file = watchStoreFile(path, location.display, pinned.identity, (lost) => log?.error({ store: location.display }, lost.message))
    }
  } catch (cause) {
    if (cause instanceof WarrantError) throw cause
    throw unopenable(cause)
  }
  // the first statement reads the file: one that holds no SQLite database is refused here, untouched
  if (!location.memory) assertDatabase(database, location.display)
  // WAL lets readers (review pages, exports) proceed while the executor writes.
  database.pragma('journal_mode = WAL')
  // Set on every open: in WAL mode the driver's default is NORMAL (a commit may be lost on power failure),
  // and the ledger's `in_flight` row must be on disk before the upstream call it announces.
  database.pragma('synchronous = FULL')
  // SQLite answers busy at once: better-sqlite3 would wait synchronously, the event loop stopped for up to
  // store.busy_timeout_ms; the store's connection waits on timers instead (BusyWaitingSqliteDialect)
  database.pragma('busy_timeout = 0')
  // Off by default in SQLite; the cascades and references in the migrations depend on it.
  database.pragma('foreign_keys = ON')
  // `x REGEXP pattern`, as PostgreSQL's `x ~ pattern` (see sqlite-regexp.ts)
  registerRegexp(database)
  if (!location.memory) assertWritable(database, location.display)
  return { database, file }
}

/**
 * A store path naming a file that holds no SQLite database (a text file, a damaged store) failed at its first
 * statement as "internal error: file is not a database … a bug in Warrant". Read only here, so nothing is written.
 */
function assertDatabase(database: BetterSqlite3.Database, display: string): void {
  try {
    database.pragma('schema_version', { simple: true })
  } catch (cause) {
    const code = String((cause as { code?: unknown }).code)
    if (code !== 'SQLITE_NOTADB' && !code.startsWith('SQLITE_CORRUPT')) throw cause
    database.close()
    throw new WarrantError('store_unavailable', `SQLite store "${display}" is not a SQLite database (${messageOf(cause)}): the config's store names another kind of file, or a damaged store; it was not changed`, {
      store: display,
    })
  }
}

/**
 * SQLite opens a file it cannot write (read-only file, folder or file system) read-only without a word, and
 * the first write then failed deep inside a command as an internal error. Every command writes the store (the
 * audit log, the signing key), so it is refused here: a header write in a transaction rolled back, nothing kept.
 */
function assertWritable(database: BetterSqlite3.Database, display: string): void {
  try {
    database.exec(`BEGIN IMMEDIATE; PRAGMA user_version = ${Number(database.pragma('user_version', { simple: true }))}; ROLLBACK`)
  } catch (cause) {
    if (database.inTransaction) database.exec('ROLLBACK')
    // busy (another connection writing) says nothing about the file: its writes will wait as any would
    if (!String((cause as { code?: unknown }).code).startsWith('SQLITE_READONLY')) return
    database.close()
    throw new WarrantError('store_unavailable', `SQLite store "${display}" cannot be written (a read-only file, folder or file system): ${messageOf(cause)}`, { store: display })
  }
}

/** Query parameters are left out of the log: they carry record fields and token hashes. */
function logQueryErrors(log: StoreLog): (event: LogEvent) => void {
  return (event) => {
    if (event.level === 'error') {
      log.error({ err: event.error, sql: event.query.sql, durationMs: event.queryDurationMillis }, 'store query failed')
    }
  }
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(messageOf).join('; ')
  return error instanceof Error ? error.message || error.name : String(error)
}
