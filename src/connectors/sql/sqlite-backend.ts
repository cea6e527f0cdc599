import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import { CompiledQuery, Kysely, SqliteDialect, sql, type Driver, type SqliteDatabase } from 'kysely'
import { messageOf, NotCommittedError, NotConnectedError, SnapshotGoneError } from './errors.js'
import { busyWaitingDriver, movedFrom, openPinned, preparedOnce, whileBusy, type BusyWaitOptions, type PinnedHandle } from '../../contract/index.js'
import type { SqlConnectorOptions } from './options.js'
import type { SqlLocation } from './url.js'
import type { Backend, Row } from './backend.js'
import { updateAndReread } from './reread-update.js'

/** Longest run of statements on this upstream before the event loop gets a turn. */
const SLICE_MS = 10

/**
 * better-sqlite3 answers synchronously: a walk or an operation over a SQLite upstream would otherwise never
 * let the event loop turn (no timer, no socket served) until it ends. After `SLICE_MS` of work, the next
 * answer is handed back on a later turn of the loop.
 */
function createSlices(): () => Promise<void> | undefined {
  let sliceStart = performance.now()
  return () => {
    if (performance.now() - sliceStart < SLICE_MS) return undefined
    return nextTurn().then(() => {
      sliceStart = performance.now()
    })
  }
}

interface RowReader {
  all(parameters: readonly unknown[]): Row[]
}

/**
 * A page query's rows as objects keyed by column name, built here from the driver's arrays (`raw` mode): the
 * driver builds each row object through V8's C++ API, property by property, and that was most of a walk's read
 * time (5,000 rows of the demo's 12 columns: ~22 ms as the driver's objects, ~14 ms as arrays made objects
 * here). Same values, same keys in the same order; a name selected twice keeps its last value, as the driver's
 * objects do.
 */
function rowReader(connection: BetterSqlite3.Database, text: string): RowReader {
  const statement = connection.prepare(text).raw(true).safeIntegers(false)
  const columns = statement.columns().map((column) => column.name)
  const build = rowBuilder(columns)
  // the same query giving every integer as a bigint, for a page where a number may have been rounded
  let exact: BetterSqlite3.Statement | null = null
  return {
    all(parameters) {
      let arrays = statement.all(...parameters) as unknown[][]
      // Integers as numbers are cheaper (bigints cost a walk ~7%), and exact below 2^53; a page holding a
      // number at or past it is read again, in the same transaction, with every integer exact.
      if (mayBeRounded(arrays)) arrays = (exact ??= connection.prepare(text).raw(true).safeIntegers(true)).all(...parameters) as unknown[][]
      const rows: Row[] = new Array(arrays.length)
      for (let r = 0; r < arrays.length; r++) rows[r] = build(arrays[r]!)
      return rows
    },
  }
}

/**
 * A row object from the driver's array, as one object literal of the query's columns: V8 then creates every row
 * with one shape at once, where setting the keys one by one cost a 5,000-row walk ~1 ms (4%). A name selected
 * twice keeps its last value, as the driver's objects do. The names go in as JSON string literals.
 */
export function rowBuilder(
  columns: readonly string[],
  compile: (body: string) => (values: readonly unknown[]) => Row = (body) => new Function('values', body) as (values: readonly unknown[]) => Row,
): (values: readonly unknown[]) => Row {
  const last = new Map(columns.map((name, index) => [name, index]))
  // a literal's "__proto__": would set the prototype; a computed key is an own property like any other
  const members = [...last].map(([name, index]) => `${name === '__proto__' ? `[${JSON.stringify(name)}]` : JSON.stringify(name)}: values[${index}]`)
  try {
    return compile(`return { ${members.join(', ')} }`)
  } catch {
    // code generation disallowed (node --disallow-code-generation-from-strings): the keys one by one
    return (values) => {
      const row: Row = {}
      for (const [name, index] of last) Object.defineProperty(row, name, { value: values[index], enumerable: true, writable: true, configurable: true })
      return row
    }
  }
}

const TWO_TO_THE_53 = 2 ** 53

/** Whether a value read as a number could be an integer the driver rounded (|n| ≥ 2^53). */
function mayBeRounded(arrays: readonly unknown[][]): boolean {
  for (const values of arrays)
    for (const value of values) if (typeof value === 'number' && (value >= TWO_TO_THE_53 || value <= -TWO_TO_THE_53)) return true
  return false
}

export function sqliteBackend(location: Extract<SqlLocation, { dialect: 'sqlite' }>, table: string, idField: string, options: SqlConnectorOptions): Backend {
  const busyTimeoutMs = options.statementTimeoutMs ?? 5_000
  const path = location.filename
  // `moved`: the file the connector had open is no longer at the path (see contract/file-identity.ts)
  const open = (readonly: boolean, moved?: 'removed' | 'replaced') => {
    // fileMustExist: a mistyped path must fail, not create an empty upstream
    let database: BetterSqlite3.Database
    try {
      database = new BetterSqlite3(path, { readonly, fileMustExist: true })
    } catch (error) {
      // whatever the cause (no folder, no file, no permission), nothing was read or written
      const why = moved ? `the file the connector had open is no longer at ${location.display} (${moved} since it was opened), and none can be opened there now: ${messageOf(error)}` : `cannot open SQLite database ${location.display}: ${messageOf(error)}`
      throw new NotConnectedError(Object.assign(new Error(why), { code: 'SQLITE_CANTOPEN', cause: error }))
    }
    // SQLite answers a lock another connection holds at once; the statement waits for it on timers (`whileBusy`):
    // better-sqlite3's busy_timeout slept synchronously, and /health, every request and the lease-renewal timer
    // stalled for up to statement_timeout_ms
    database.pragma('busy_timeout = 0')
    // every integer as a bigint: the driver would round one past 2^53 to a neighbour's value (an id naming
    // another row); record.ts makes those a number can hold numbers again. A walk's page reader asks for
    // bigints only where it needs them (rowReader)
    database.defaultSafeIntegers(true)
    return database
  }
  const pin = (readonly: boolean, moved?: 'removed' | 'replaced') =>
    openPinned(path, () => open(readonly, moved), () => new NotConnectedError(new Error(`the SQLite file at ${location.display} was moved while it was being opened; nothing was read or written`)))
  // The shared connection (reads by id, the catalogue, writes) follows the file at the path: before each statement
  // outside a transaction it is reopened there if the file it had open was removed or replaced, so a read never
  // describes, and a write never lands in, a file no longer there (a write stays conditional on the version read
  // at the path). Inside a transaction the statement stays on the transaction's file; COMMIT checks it (update).
  let shared: PinnedHandle<BetterSqlite3.Database> | null = null
  // the file last opened, kept once it is gone: every later failure to open says it was there
  let lastOpened: string | null = null
  const sharedDatabase = (): BetterSqlite3.Database => {
    if (shared !== null && (shared.database.inTransaction || movedFrom(path, shared.identity) === null)) return shared.database
    shared?.database.close()
    shared = null
    shared = pin(false, lastOpened === null ? undefined : (movedFrom(path, lastOpened) ?? undefined))
    lastOpened = shared.identity
    return shared.database
  }
  // each statement prepared once per connection (a window's UPDATE, a window's read: the same texts every window;
  // prepared anew they cost ~30 µs a target on a sql operation); a connection reopened on the file starts afresh
  const prepared = new WeakMap<BetterSqlite3.Database, (text: string) => BetterSqlite3.Statement>()
  const prepareOn = (database: BetterSqlite3.Database) => {
    let prepare = prepared.get(database)
    if (prepare === undefined) prepared.set(database, (prepare = preparedOnce((text) => database.prepare(text))))
    return prepare
  }
  const following: SqliteDatabase = { prepare: (text) => prepareOn(sharedDatabase())(text), close: () => shared?.database.close() }
  // SQLite's own error (SQLITE_BUSY) once the wait is over, as busy_timeout answered it: the outcomes stay as they were
  const waiting: BusyWaitOptions = { inTransaction: () => shared?.database.inTransaction ?? false, timeoutMs: busyTimeoutMs, refuse: (error) => error }
  const dialect = new (class extends SqliteDialect {
    override createDriver(): Driver {
      return busyWaitingDriver(super.createDriver(), waiting)
    }
  })({ database: async () => following })
  const db = new Kysely<any>({ dialect })
  const endSlice = createSlices()
  return {
    db,
    run: async (query) => {
      const rows = (await db.executeQuery<Row>(query)).rows as Row[]
      await endSlice()
      return rows
    },
    // RETURNING answers in the same statement, autocommitted; where a trigger may change the row after it, the
    // UPDATE and its rows read again are one transaction on the connector's one connection (IMMEDIATE: the
    // write lock is taken at BEGIN, so the COMMIT cannot find a reader in its way); so is a write whose generated
    // columns may move outside its set, judged before COMMIT (`judgedBeforeCommit`)
    update: async (statement) => {
      const rows = statement.returningIsFinal && !statement.judgedBeforeCommit
        ? ((await db.executeQuery<Row>(statement.returning)).rows as Row[])
        : await db.connection().execute((conn) =>
            updateAndReread(
              {
                run: async (query) => {
                  // the file moved during the transaction: COMMIT would make the write in a file no longer there
                  const moved = query === 'COMMIT' && shared !== null ? movedFrom(path, shared.identity) : null
                  if (moved !== null) throw new NotCommittedError(`the SQLite file the write was made in was ${moved} at ${location.display} before COMMIT`, new Error(`file ${moved}`))
                  return (await conn.executeQuery<Row>(typeof query === 'string' ? CompiledQuery.raw(query) : query)).rows as Row[]
                },
              },
              'BEGIN IMMEDIATE',
              statement,
            ),
          )
      await endSlice()
      return rows
    },
    openHandle: async () => {
      const openedAt = new Date().toISOString()
      const { database: connection, identity } = pin(true)
      try {
        // A deferred BEGIN; the first read fixes the WAL snapshot, so it is taken now, not at the first page.
        connection.exec('BEGIN')
        // max(id) is an index seek; with the open time it names the snapshot (SQLite has no snapshot id).
        const probe = db.selectFrom(table).select(sql<unknown>`max(${sql.ref(idField)})`.as('max_id')).compile()
        // the transaction's first statement: run again while it meets another connection's lock (nothing read yet)
        const row = (await whileBusy(() => connection.prepare(probe.sql).get(...(probe.parameters as unknown[])), () => connection.inTransaction, busyTimeoutMs, waiting.refuse)) as
          | { max_id: unknown }
          | undefined
        const snapshot = `sqlite:${openedAt};max_id=${row?.max_id ?? ''}`
        // a walk runs the same page query with another last id: prepared once per session, not per page
        const prepared = new Map<string, RowReader>()
        return {
          snapshot,
          run: async (query) => {
            // the snapshot is of the file opened; one no longer at the path is not the database there
            const moved = movedFrom(path, identity)
            if (moved !== null) throw new SnapshotGoneError(`the SQLite file at ${location.display} was ${moved} since this walk began: its snapshot is of a file no longer there, so the walk cannot go on over it (start it again to read the file there now)`)
            let reader = prepared.get(query.sql)
            if (!reader) prepared.set(query.sql, (reader = rowReader(connection, query.sql)))
            const rows = reader.all(query.parameters as unknown[])
            await endSlice()
            return rows
          },
          close: async () => {
            try {
              if (connection.inTransaction) connection.exec('COMMIT')
            } finally {
              connection.close()
            }
          },
        }
      } catch (error) {
        connection.close()
        throw error
      }
    },
    destroy: () => db.destroy(),
  }
}
