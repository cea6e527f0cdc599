import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery, type SqlBool } from 'kysely'
import pg from 'pg'
import { WarrantError } from '../../contract/index.js'
import { readSecret, type FieldType, type ResourceConfig, type SqlConnectorConfig } from '../../config/index.js'
import type {
  Connector,
  ReadByIdsResult,
  ReadPageRequest,
  ReadPageResult,
  ReadSession,
  SourceRecord,
  UpstreamCall,
  UpstreamCallListener,
  WriteOutcome,
  WriteRequest,
} from '../connector.js'
import { compileFilter, fieldTypeOf, isValueOfType, type FieldTypes } from './compile.js'
import { classifyWriteError, messageOf } from './errors.js'
import { keyString, toSourceRecord } from './record.js'
import { parseSqlUrl, type SqlDialectName, type SqlLocation } from './url.js'

export interface SqlConnectorOptions {
  /** A resource whose `connector.kind` is `sql`; it must declare `version_field`. */
  readonly resource: ResourceConfig
  /** Receives one event per statement sent upstream (never values, never credentials). */
  readonly onCall?: UpstreamCallListener
  /** A read session with no read for this long is closed and its next read is `cursor_expired`. Default 5 minutes. */
  readonly sessionIdleTimeoutMs?: number
  /** PostgreSQL: pooled connections for writes and reads by id. Default 5. */
  readonly maxConnections?: number
  /** PostgreSQL: connections for read sessions, a pool of their own so walks never starve writes. Default 10. */
  readonly maxSessions?: number
  /** PostgreSQL `statement_timeout` and SQLite `busy_timeout`, in ms. Default 30 s (PostgreSQL), 5 s (SQLite). */
  readonly statementTimeoutMs?: number
  /** The password for a postgres URL without one; default: `connector.password` resolved by `readSecret`. */
  readonly password?: string
  /** The clock for new timestamp versions and `updated_at`. */
  readonly now?: () => Date
}

/** A connector to one SQL table. */
export interface SqlConnector extends Connector {
  readonly kind: 'sql'
  readonly dialect: SqlDialectName
  /** The name this table is reported under (`connector.source`). */
  readonly source: string
}

/** Rows of the declared columns, as the driver returns them. */
type Row = Record<string, unknown>

/** One dedicated connection holding one read transaction. */
interface SessionHandle {
  readonly snapshot: string
  run(query: CompiledQuery): Promise<Row[]>
  close(): Promise<void>
}

interface Backend {
  readonly db: Kysely<any>
  /** Runs on the shared connection(s): reads by id and writes, outside any session. */
  run(query: CompiledQuery): Promise<Row[]>
  openHandle(): Promise<SessionHandle>
  destroy(): Promise<void>
}

const READ_BY_IDS_CHUNK = 500
const VERSION_TYPES: readonly FieldType[] = ['integer', 'timestamp', 'string']
const ID_TYPES: readonly FieldType[] = ['string', 'integer', 'number', 'timestamp']

/**
 * A connector to one table of SQLite or PostgreSQL.
 *
 * Reads walk in keyset order on the id column, inside one read transaction per session, so a whole walk sees
 * one snapshot (`consistentSnapshot: true`). Writes are one conditional `UPDATE … WHERE id AND version AND
 * precondition RETURNING …`. Every value is a parameter; identifiers come from the validated config and are
 * quoted by kysely. Nothing is connected until first use, so an unreachable upstream is a result, not a crash.
 *
 * @example
 * const connector = createSqlConnector({ resource: config.resources.subscriptions, onCall: audit.recordCall })
 * const session = await connector.openSession()
 * const page = await session.readPage({ source: connector.source, filter: { status: 'past_due' }, position: null, pageSize: 100 })
 *
 * @throws WarrantError('invalid_request') for a resource that is not a usable sql resource.
 */
export function createSqlConnector(options: SqlConnectorOptions): SqlConnector {
  const { resource } = options
  if (resource.connector.kind !== 'sql') throw new WarrantError('invalid_request', `createSqlConnector needs a sql resource, got kind "${resource.connector.kind}"`)
  const config: SqlConnectorConfig = resource.connector
  const fields: FieldTypes = resource.fields
  const idField = resource.id_field
  const idType = fieldTypeOf(fields, idField, 'id_field')
  if (!ID_TYPES.includes(idType)) throw new WarrantError('invalid_request', `id_field "${idField}" is a ${idType} field; an id is a string or a number`)
  const declaredVersionField = resource.version_field
  if (declaredVersionField === undefined) throw new WarrantError('invalid_request', 'a sql resource needs version_field: the column that changes on every write')
  const versionField: string = declaredVersionField
  const versionType = fieldTypeOf(fields, versionField, 'version_field')
  if (!VERSION_TYPES.includes(versionType)) {
    throw new WarrantError('invalid_request', `version_field "${versionField}" is a ${versionType} field; a version is an integer, a timestamp or a string`)
  }
  const password = options.password ?? (config.password ? readSecret(config.password) : undefined)
  const location = parseSqlUrl(config.url, password)
  const dialect = location.dialect
  const table = config.table
  const source = config.source
  const columns = Object.keys(fields)
  const endpoint = `table ${table}`
  const idleTimeoutMs = options.sessionIdleTimeoutMs ?? 5 * 60_000
  const clock = options.now ?? (() => new Date())
  const backend = location.dialect === 'sqlite' ? sqliteBackend(location, table, idField, options) : postgresBackend(location, options)
  const { db } = backend
  const sessions = new Set<Session>()
  let closing: Promise<void> | undefined

  const emit = (call: Omit<UpstreamCall, 'source' | 'endpoint' | 'status'>) => {
    if (!options.onCall) return
    try {
      options.onCall({ source, endpoint, status: null, ...call })
    } catch {
      // a listener's failure must not change what happened upstream
    }
  }
  const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; durationMs: number } | { error: unknown; durationMs: number }> => {
    const started = performance.now()
    try {
      const value = await work()
      return { value, durationMs: performance.now() - started }
    } catch (error) {
      return { error, durationMs: performance.now() - started }
    }
  }
  const toRecord = (row: Row): SourceRecord => toSourceRecord(row, fields, idField, versionField)
  const selectRows = () => db.selectFrom(table).select(columns)

  class Session implements ReadSession {
    readonly consistentSnapshot = true
    readonly snapshot: string
    #state: 'open' | 'closed' | 'expired' | 'broken' = 'open'
    #brokenBy = ''
    #timer: NodeJS.Timeout | undefined
    #closing: Promise<void> | undefined

    constructor(private readonly handle: SessionHandle) {
      this.snapshot = handle.snapshot
      this.#arm()
    }

    async readPage(request: ReadPageRequest): Promise<ReadPageResult> {
      if (request.source !== source) throw new WarrantError('invalid_request', `unknown source "${request.source}": this connector reads "${source}"`, { source: request.source })
      if (!Number.isSafeInteger(request.pageSize) || request.pageSize < 1) {
        throw new WarrantError('invalid_request', `page size must be a positive integer, got ${request.pageSize}`)
      }
      const where = compileFilter(request.filter, fields, dialect)
      const after = request.position === null ? undefined : decodePosition(request.position)
      if (this.#state === 'expired') return { kind: 'cursor_expired', message: `the read session on ${endpoint} expired after ${idleTimeoutMs} ms without a read; its snapshot is gone` }
      if (this.#state === 'closed') return { kind: 'cursor_expired', message: `the read session on ${endpoint} is closed; its snapshot is gone` }
      if (this.#state === 'broken') return { kind: 'unavailable', message: `the read session on ${endpoint} failed earlier: ${this.#brokenBy}` }
      if (request.signal?.aborted) return { kind: 'unavailable', message: 'the read was aborted before it was sent' }

      let query = selectRows()
      if (where) query = query.where(where)
      if (after !== undefined) query = query.where(sql<SqlBool>`${sql.ref(idField)} > ${after}`)
      const compiled = query.orderBy(idField).limit(request.pageSize + 1).compile()
      this.#disarm()
      const result = await timed(() => this.handle.run(compiled))
      if ('error' in result) {
        this.#state = 'broken'
        this.#brokenBy = messageOf(result.error)
        emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
        void this.#release()
        return { kind: 'unavailable', message: `reading ${endpoint} failed: ${this.#brokenBy}` }
      }
      if (this.#state === 'open') this.#arm()
      const rows = result.value
      emit({ method: 'SELECT', outcome: 'ok', durationMs: result.durationMs })
      const more = rows.length > request.pageSize
      const pageRows = more ? rows.slice(0, request.pageSize) : rows
      const last = pageRows[pageRows.length - 1]
      return {
        kind: 'page',
        items: pageRows.map(toRecord),
        next: more && last ? encodePosition(last[idField]) : null,
      }
    }

    close(): Promise<void> {
      if (this.#state === 'open') this.#state = 'closed'
      return this.#release()
    }

    /** Ends the transaction because nobody read for too long, or the connector closes. */
    expire(): Promise<void> {
      if (this.#state === 'open') this.#state = 'expired'
      return this.#release()
    }

    #release(): Promise<void> {
      this.#disarm()
      sessions.delete(this)
      return (this.#closing ??= this.handle.close().catch(() => undefined))
    }

    #arm() {
      this.#disarm()
      this.#timer = setTimeout(() => void this.expire(), idleTimeoutMs)
      this.#timer.unref()
    }

    #disarm() {
      if (this.#timer) clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }

  /** A session that could not be opened: every read says why. */
  const failedSession = (message: string): ReadSession => ({
    consistentSnapshot: false,
    snapshot: null,
    readPage: async (request) => {
      compileFilter(request.filter, fields, dialect)
      return { kind: 'unavailable', message }
    },
    close: async () => undefined,
  })

  const idParam = (id: string): string | number | undefined => {
    if (idType === 'string' || idType === 'timestamp') return id
    if (idType === 'integer' ? !/^-?\d+$/.test(id) : !Number.isFinite(Number(id)) || id.trim() === '') return undefined
    return Number(id)
  }

  const connector: SqlConnector = {
    kind: 'sql',
    dialect,
    source,
    sources: [source],
    ordering: `${idField} ascending`,

    async openSession() {
      if (closing) return failedSession(`the connector for ${endpoint} is closed`)
      const result = await timed(() => backend.openHandle())
      if ('error' in result) {
        emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
        return failedSession(`cannot open a read session on ${endpoint} (${location.display}): ${messageOf(result.error)}`)
      }
      emit({ method: 'SELECT', outcome: 'session_opened', durationMs: result.durationMs })
      if (closing) {
        await result.value.close().catch(() => undefined)
        return failedSession(`the connector for ${endpoint} is closed`)
      }
      const session = new Session(result.value)
      sessions.add(session)
      return session
    },

    async readByIds(ids, signal) {
      const unique = [...new Set(ids)]
      const records = new Map<string, SourceRecord>()
      const failed: { id: string; message: string }[] = []
      const queryable = unique.filter((id) => idParam(id) !== undefined)
      for (let start = 0; start < queryable.length; start += READ_BY_IDS_CHUNK) {
        const chunk = queryable.slice(start, start + READ_BY_IDS_CHUNK)
        if (closing || signal?.aborted) {
          const message = closing ? 'the connector is closed' : 'the read was aborted'
          for (const id of chunk) failed.push({ id, message })
          continue
        }
        const compiled = selectRows()
          .where(sql<SqlBool>`${sql.ref(idField)} in (${sql.join(chunk.map((id) => idParam(id)!))})`)
          .compile()
        const result = await timed(() => backend.run(compiled))
        if ('error' in result) {
          emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
          const message = `reading ${endpoint} by id failed: ${messageOf(result.error)}`
          for (const id of chunk) failed.push({ id, message })
          continue
        }
        emit({ method: 'SELECT', outcome: 'ok', durationMs: result.durationMs, ...(chunk.length === 1 ? { targetId: chunk[0] } : {}) })
        for (const row of result.value) {
          const record = toRecord(row)
          records.set(record.id, record)
        }
      }
      const failedIds = new Set(failed.map((f) => f.id))
      return { records, missing: unique.filter((id) => !records.has(id) && !failedIds.has(id)), failed } satisfies ReadByIdsResult
    },

    async write(request: WriteRequest): Promise<WriteOutcome> {
      const assignments = encodeSet(request.set)
      const precondition = compileFilter(request.precondition, fields, dialect, 'precondition')
      const targetId = request.id
      if (closing) return { kind: 'rejected', status: 503, message: `the connector for ${endpoint} is closed; nothing was written` }
      const id = idParam(request.id)
      if (id === undefined) return { kind: 'conflict', reason: 'missing', message: `"${request.id}" is not a valid ${idType} id; no such record` }
      const expected = versionParam(request.expectedVersion)
      if (expected === undefined) {
        return { kind: 'conflict', reason: 'version_changed', message: `expected version "${request.expectedVersion}" is not a valid ${versionType} version` }
      }

      const now = clock()
      const set: Record<string, unknown> = { ...assignments }
      set[versionField] = nextVersion(request.expectedVersion, now)
      if (fields.updated_at === 'timestamp' && versionField !== 'updated_at' && !('updated_at' in request.set)) set.updated_at = now.toISOString()

      const conditions = [sql`${sql.ref(idField)} = ${id}`, versionCondition(expected)]
      if (precondition) conditions.push(precondition)
      const compiled = db
        .updateTable(table)
        .set(set)
        .where(sql<SqlBool>`${sql.join(conditions, sql` and `)}`)
        .returning(columns)
        .compile()
      const result = await timed(() => backend.run(compiled))
      if ('error' in result) {
        const failure = classifyWriteError(result.error)
        emit({ method: 'UPDATE', targetId, outcome: failure.kind, durationMs: result.durationMs })
        return failure
      }
      const rows = result.value
      if (rows.length === 1) {
        emit({ method: 'UPDATE', targetId, outcome: 'written', durationMs: result.durationMs })
        return { kind: 'written', status: 200, record: toRecord(rows[0]!) }
      }
      if (rows.length > 1) {
        emit({ method: 'UPDATE', targetId, outcome: 'unknown', durationMs: result.durationMs })
        return { kind: 'unknown', message: `${rows.length} rows of ${endpoint} have ${idField} "${request.id}": the id is not unique and every one of them was written` }
      }
      emit({ method: 'UPDATE', targetId, outcome: 'conflict', durationMs: result.durationMs })
      return explainNoRow(request, id)
    },

    close() {
      return (closing ??= (async () => {
        await Promise.all([...sessions].map((s) => s.expire()))
        await backend.destroy()
      })())
    },
  }

  /** After an UPDATE that matched nothing: read the row to say why. The write did not happen either way. */
  async function explainNoRow(request: WriteRequest, id: string | number): Promise<WriteOutcome> {
    const compiled = selectRows().where(sql<SqlBool>`${sql.ref(idField)} = ${id}`).compile()
    const result = await timed(() => backend.run(compiled))
    if ('error' in result) {
      emit({ method: 'SELECT', targetId: request.id, outcome: 'error', durationMs: result.durationMs })
      return {
        kind: 'conflict',
        reason: 'precondition_failed',
        message: `nothing was written: the record did not match its id, version and precondition (reading it back failed: ${messageOf(result.error)})`,
      }
    }
    emit({ method: 'SELECT', targetId: request.id, outcome: 'ok', durationMs: result.durationMs })
    const row = result.value[0]
    if (!row) return { kind: 'conflict', reason: 'missing', message: `${endpoint} has no record with ${idField} "${request.id}"` }
    const record = toRecord(row)
    if (!sameVersion(record.version, request.expectedVersion)) {
      return { kind: 'conflict', reason: 'version_changed', message: `record "${request.id}" is at version ${record.version}, not the expected ${request.expectedVersion}` }
    }
    return { kind: 'conflict', reason: 'precondition_failed', message: `record "${request.id}" no longer meets the action's precondition` }
  }

  /** `set` as column values: declared, writable fields only, each of its type; tags as JSON text. */
  function encodeSet(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    const entries = Object.entries(values)
    if (entries.length === 0) throw new WarrantError('invalid_request', 'a write sets at least one field')
    for (const [field, value] of entries) {
      const type = fieldTypeOf(fields, field, 'the write')
      if (field === idField || field === versionField) {
        throw new WarrantError('invalid_request', `a write cannot set "${field}": the connector owns the id and the version`, { field })
      }
      if (value === null) {
        out[field] = null
      } else if (type === 'tags') {
        if (!Array.isArray(value) || !value.every((t) => typeof t === 'string')) throw setMismatch(field, type, 'an array of strings')
        out[field] = JSON.stringify(value)
      } else {
        if (!isValueOfType(type, value)) throw setMismatch(field, type, type === 'integer' ? 'an integer' : `a ${type === 'timestamp' ? 'string' : type}`)
        out[field] = typeof value === 'boolean' && dialect === 'sqlite' ? (value ? 1 : 0) : value
      }
    }
    return out
  }

  function versionParam(version: string): string | number | undefined {
    if (versionType === 'integer') return /^-?\d+$/.test(version) && Number.isSafeInteger(Number(version)) ? Number(version) : undefined
    if (versionType === 'timestamp') return Number.isNaN(Date.parse(version)) ? undefined : version
    return version
  }

  function versionCondition(expected: string | number) {
    const column = sql.ref(versionField)
    if (versionType === 'timestamp' && dialect === 'postgres') {
      // a timestamptz column keeps microseconds; what we handed out was read at millisecond precision
      return sql`date_trunc('milliseconds', cast(${column} as timestamptz)) = date_trunc('milliseconds', cast(${expected} as timestamptz))`
    }
    if (versionType === 'integer' && dialect === 'postgres') return sql`${column} = cast(${expected} as bigint)`
    return sql`${column} = ${expected}`
  }

  function nextVersion(expected: string, now: Date): unknown {
    if (versionType === 'integer') return sql`${sql.ref(versionField)} + 1`
    if (versionType === 'timestamp') {
      const previous = Date.parse(expected)
      return new Date(Math.max(now.getTime(), previous + 1)).toISOString()
    }
    return randomUUID()
  }

  function sameVersion(stored: string, expected: string): boolean {
    if (stored === expected) return true
    if (versionType !== 'timestamp') return false
    const a = Date.parse(stored)
    const b = Date.parse(expected)
    return !Number.isNaN(a) && a === b
  }

  return connector
}

function setMismatch(field: string, type: FieldType, expected: string): WarrantError {
  return new WarrantError('invalid_request', `the write sets "${field}", a ${type} field, to a value that is not ${expected}`, { field })
}

/** Positions are the last id read, as JSON: `{"after":"sub_00100"}`. */
function encodePosition(id: unknown): string {
  return JSON.stringify({ after: typeof id === 'bigint' ? id.toString() : id instanceof Date ? id.toISOString() : id })
}

function decodePosition(position: string): string | number {
  let parsed: unknown
  try {
    parsed = JSON.parse(position)
  } catch {
    parsed = undefined
  }
  const after = (parsed as { after?: unknown } | undefined)?.after
  if (typeof after === 'string' || (typeof after === 'number' && Number.isFinite(after))) return after
  throw new WarrantError('invalid_cursor', 'this position was not issued by the sql connector')
}

function sqliteBackend(location: Extract<SqlLocation, { dialect: 'sqlite' }>, table: string, idField: string, options: SqlConnectorOptions): Backend {
  const busyTimeoutMs = options.statementTimeoutMs ?? 5_000
  const open = (readonly: boolean) => {
    // fileMustExist: a mistyped path must fail, not create an empty upstream
    let database: BetterSqlite3.Database
    try {
      database = new BetterSqlite3(location.filename, { readonly, fileMustExist: true })
    } catch (error) {
      // whatever the cause (no folder, no file, no permission), nothing was read or written
      throw Object.assign(new Error(`cannot open SQLite database ${location.display}: ${messageOf(error)}`), { code: 'SQLITE_CANTOPEN', cause: error })
    }
    database.pragma(`busy_timeout = ${busyTimeoutMs}`)
    return database
  }
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: async () => open(false) }) })
  return {
    db,
    run: async (query) => (await db.executeQuery<Row>(query)).rows as Row[],
    openHandle: async () => {
      const openedAt = new Date().toISOString()
      const connection = open(true)
      try {
        // A deferred BEGIN; the first read fixes the WAL snapshot, so it is taken now, not at the first page.
        connection.exec('BEGIN')
        // max(id) is an index seek; with the open time it names the snapshot (SQLite has no snapshot id).
        const probe = db.selectFrom(table).select(sql<unknown>`max(${sql.ref(idField)})`.as('max_id')).compile()
        const row = connection.prepare(probe.sql).get(...(probe.parameters as unknown[])) as { max_id: unknown } | undefined
        const snapshot = `sqlite:${openedAt};max_id=${row?.max_id ?? ''}`
        return {
          snapshot,
          run: async (query) => connection.prepare(query.sql).all(...(query.parameters as unknown[])) as Row[],
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

function postgresBackend(location: Extract<SqlLocation, { dialect: 'postgres' }>, options: SqlConnectorOptions): Backend {
  const common = {
    connectionString: location.connectionString,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'warrant',
  }
  const pool = new pg.Pool({ ...common, max: options.maxConnections ?? 5 })
  const sessionPool = new pg.Pool({ ...common, max: options.maxSessions ?? 10, idleTimeoutMillis: 10_000 })
  // An idle connection whose server goes away emits 'error' on its pool; unhandled, that would end the process.
  pool.on('error', () => undefined)
  sessionPool.on('error', () => undefined)
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    run: async (query) => (await db.executeQuery<Row>(query)).rows as Row[],
    openHandle: async () => {
      const client = await sessionPool.connect()
      let broken: Error | undefined
      // A checked-out client has no listener of the pool's; without one, a dropped connection would crash.
      const onError = (error: Error) => {
        broken ??= error
      }
      client.on('error', onError)
      const release = () => {
        client.removeListener('error', onError)
        client.release(broken ?? undefined)
      }
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
        // The first statement of a REPEATABLE READ transaction takes its snapshot: now, not at the first page.
        const result = await client.query<{ snapshot: string }>('SELECT pg_current_snapshot()::text AS snapshot')
        return {
          snapshot: `postgres:${result.rows[0]?.snapshot ?? ''}`,
          run: async (query) => {
            if (broken) throw broken
            try {
              return (await client.query(query.sql, query.parameters as unknown[])).rows as Row[]
            } catch (error) {
              broken ??= error instanceof Error ? error : new Error(String(error))
              throw error
            }
          },
          close: async () => {
            try {
              if (!broken) await client.query('COMMIT')
            } catch (error) {
              broken ??= error instanceof Error ? error : new Error(String(error))
            } finally {
              release()
            }
          },
        }
      } catch (error) {
        broken ??= error instanceof Error ? error : new Error(String(error))
        release()
        throw error
      }
    },
    destroy: async () => {
      await Promise.all([db.destroy(), sessionPool.end()])
    },
  }
}
