import { CompiledQuery, sql, type RawBuilder, type SqlBool } from 'kysely'
import { WarrantError } from '../../contract/index.js'
import type { ReadPageRequest, ReadPageResult, ReadSession } from '../connector.js'
import type { Row, SessionHandle, SessionStream } from './backend.js'
import type { CatalogueFacts } from './catalogue-facts.js'
import { filterMisfit } from './field-misfits.js'
import { createPageJudge } from './page-judge.js'
import { compileFilter } from './compile.js'
import { looseFieldsOf } from './loose-values.js'
import { selectRows, timed, type ConnectorContext } from './context.js'
import { classifyReadError, isMissingTable, messageOf, SnapshotGoneError } from './errors.js'
import { rowsIdRefusal } from './id-kind.js'
import { keyString } from './record.js'

/** Where the last id read goes in a compiled page query (a unique object: no value a caller passes is it). */
const AFTER_SLOT: unknown = Object.freeze({ slot: 'after' })
const NO_FIELDS: ReadonlyMap<string, boolean> = new Map()
const NO_STRINGS: ReadonlySet<string> = new Set()
const NONE: ReadonlySet<string> = new Set()
/** Compiled page queries a session keeps (a walk uses two: the first page and the rest). */
const STATEMENTS_KEPT = 8

/**
 * A walk in keyset order on the id column inside one read transaction, so every page sees the snapshot taken
 * when the session opened (a table whose engine keeps no transactions has none: `consistentSnapshot` false).
 * Idle sessions expire: an open transaction pins old row versions upstream. Its pages use the catalogue facts read
 * as it opened (one catalogue read per walk): a migration in the middle of a walk is seen by the next session.
 *
 * Keyset positions hold only where no two rows share an id: `id > last` skips every row equal to the last one
 * read. Where the catalogue does not prove the id unique (a view, a table without a key), each page is checked
 * in the engine's own comparison, and a repeated id refuses the walk, naming the column and the fix.
 */
class SqlReadSession implements ReadSession {
  /** Keyset on the id column: a page resumed in a later session still starts strictly after the last id read. */
  readonly positions = 'keyset' as const
  readonly snapshot: string
  #state: 'open' | 'closed' | 'expired' | 'broken' = 'open'
  #brokenBy = ''
  #timer: NodeJS.Timeout | undefined
  #closing: Promise<void> | undefined
  readonly #statements = new Map<string, CompiledQuery>()
  /** The walk's open query (engines that keep one open), the position its next row follows, that row if read. */
  #walk: { key: string; stream: SessionStream; position: string | null; carry: Row | null } | null = null
  #judge: { filter: ReadPageRequest['filter']; judge: ReturnType<typeof createPageJudge> } | undefined
  /** String fields over columns that do not hold text (the session's column facts), compared as text. */
  readonly #asText: ReadonlyMap<string, boolean>
  /** String fields PostgreSQL compares otherwise than by code point (char(n), citext, a non-deterministic collation). */
  readonly #byCodePoint: ReadonlySet<string>
  /** Fields whose column can hold values of another type (the column facts): judged in memory too. */
  readonly #loose: ReadonlySet<string>
  /** How the session's filters compile: its column facts (every page, count and check of a walk alike). */
  readonly #compiling: Parameters<typeof compileFilter>[4]
  /** The id column may hold NULL (the table facts): pages leave such rows out, the first page counts them. */
  readonly #idNullable: boolean
  /** The id as the walk orders and resumes by it: under the collation its unique index proves (the table facts). */
  readonly #idKey: RawBuilder<unknown>

  constructor(
    private readonly ctx: ConnectorContext,
    private readonly handle: SessionHandle,
    private readonly facts: CatalogueFacts,
    readonly consistentSnapshot: boolean,
    private readonly onRelease: (session: SqlReadSession) => void,
  ) {
    this.snapshot = handle.snapshot
    this.#asText = facts.columns?.comparedAsText ?? NO_FIELDS
    this.#byCodePoint = facts.columns?.comparedByCodePoint ?? NO_STRINGS
    this.#loose = facts.columns?.looseValues ?? looseFieldsOf(ctx.fields, null, ctx.dialect)
    this.#compiling = { judgedInMemory: this.#loose, comparedAsText: this.#asText, comparedByCodePoint: this.#byCodePoint, zeroDates: facts.columns?.zeroDates, comparedAsShown: facts.columns?.comparedAsShown, narrowText: facts.columns?.narrowText }
    // facts that could not be read: a NULL id is not ruled out
    this.#idNullable = facts.table?.idNullable !== false
    const collation = facts.table?.idCollation ?? null
    this.#idKey = collation === null ? sql.ref(ctx.idField) : sql`${sql.ref(ctx.idField)} collate ${sql.raw(collation)}`
    this.#arm()
  }

  async readPage(request: ReadPageRequest): Promise<ReadPageResult> {
    const { ctx } = this
    const { source, endpoint, idField } = ctx
    if (request.source !== source) throw new WarrantError('invalid_request', `unknown source "${request.source}": this connector reads "${source}"`, { source: request.source })
    if (!Number.isSafeInteger(request.pageSize) || request.pageSize < 1) {
      throw new WarrantError('invalid_request', `page size must be a positive integer, got ${request.pageSize}`)
    }
    const { columns: facts, table } = this.facts
    const statement = this.#statementFor(request, request.position !== null)
    const after = request.position === null ? undefined : decodePosition(request.position)
    if (this.#state === 'expired') return { kind: 'cursor_expired', message: `the read session on ${endpoint} expired after ${ctx.idleTimeoutMs} ms without a read; its snapshot is gone` }
    if (this.#state === 'closed') return { kind: 'cursor_expired', message: `the read session on ${endpoint} is closed; its snapshot is gone` }
    if (this.#state === 'broken') return { kind: 'unavailable', message: `the read session on ${endpoint} failed earlier: ${this.#brokenBy}` }
    if (request.signal?.aborted) return { kind: 'unavailable', message: 'the read was aborted before it was sent' }
    if (table?.idRefusal) return { kind: 'refused', message: table.idRefusal, configKey: 'id_field' }
    // the rows a policy hides are part of the scope this role cannot see: never a complete answer
    if (table?.hiddenRows) return { kind: 'forbidden', status: 403, message: table.hiddenRows }
    const misfit = filterMisfit(Object.keys(request.filter), facts?.misfits ?? null)
    if (misfit !== null) return { kind: 'refused', message: misfit, configKey: `fields.${Object.keys(request.filter).find((f) => facts?.misfits.some((m) => m.field === f))}` }

    this.#disarm()
    // only an id the catalogue does not prove unique costs a check (the proven walk is as fast as ever)
    const checked = table?.idUnique !== true
    // each statement the page runs is a call of its own (`#called`): the page query, and the counts beside it
    const result = await timed(async () => {
      const rows = await this.#called(() => (this.handle.stream ? this.#streamed(request, after) : this.handle.run(bind(statement, after))))
      // rows without an id (or, on SQLite, keyed by bytes) are counted once per walk, on its first page (the count
      // travels in the walk's gaps)
      const unkeyed = (this.#idNullable || ctx.dialect === 'sqlite') && request.position === null ? await this.#unkeyedCount(request) : NONE_UNKEYED
      return { rows, unkeyed, repeated: checked ? await this.#repeatedId(request, rows) : null }
    })
    if ('error' in result) {
      // its snapshot is of a database no longer there: expired, never carried on over another one
      const gone = result.error instanceof SnapshotGoneError
      this.#state = gone ? 'expired' : 'broken'
      this.#brokenBy = messageOf(result.error)
      void this.#release()
      return gone ? { kind: 'cursor_expired', message: this.#brokenBy } : classifyReadError(endpoint, result.error)
    }
    if (this.#state === 'open') this.#arm()
    const { rows, unkeyed, repeated } = result.value
    // every row's id by its runtime kind, whatever the column's type name (an untyped SQLite column, a view): an
    // object would be shown as "[object Object]", every such row under one id
    const wrongKind = rowsIdRefusal(rows, endpoint, idField, request.position === null ? 'the first page of the walk' : `the page after position ${request.position}`)
    if (wrongKind !== null) return { kind: 'refused', message: wrongKind, configKey: 'id_field' }
    if (repeated !== null) return { kind: 'refused', message: repeated, configKey: 'id_field' }
    const more = rows.length > request.pageSize
    const pageRows = more ? rows.slice(0, request.pageSize) : rows
    const last = pageRows[pageRows.length - 1]
    // a float id that is no JSON number (PostgreSQL's ±Infinity and NaN, SQLite's 9e999) gives no position to resume after
    const stuck = more && last ? last[idField] : undefined
    if (typeof stuck === 'number' && !Number.isFinite(stuck))
      return { kind: 'refused', message: `column "${idField}" of ${endpoint} holds ${stuck}, and a page ends on it: no position carries it, so a walk in id order cannot resume after it and the rows past it are not read; store finite ids, or choose another unique column as id_field`, configKey: 'id_field' }
    // the position from the id as stored, before the rows become records (normalised in place)
    const next = more && last ? encodePosition(last[idField]) : null
    const judged = this.#judgeOf(request.filter)(pageRows.map(ctx.pageRecordOf))
    const { items } = judged
    const unjudged = withUnkeyed(judged.unjudged, unkeyed, idField)
    return unjudged === null ? { kind: 'page', items, next } : { kind: 'page', items, next, unjudged }
  }

  /**
   * Why this page cannot be trusted to its position, or null: two of its rows have one id (one record, the
   * other lost), or the last id of a page with more after it is shared by another row, which `id > last` would
   * skip. The second is asked of the engine (`count(*) … where id = last`), whose equality may not be
   * JavaScript's: 'a' = 'A' under a case-insensitive collation.
   */
  async #repeatedId(request: ReadPageRequest, rows: readonly Row[]): Promise<string | null> {
    const { idField } = this.ctx
    const pageRows = rows.length > request.pageSize ? rows.slice(0, request.pageSize) : rows
    const ids = new Set<string>()
    for (const row of pageRows) {
      const id = keyString(row[idField])
      if (ids.has(id)) return this.#notUnique(`${idField} "${id}" is held by two rows of one page`)
      ids.add(id)
    }
    if (rows.length <= request.pageSize || pageRows.length === 0) return null
    const last = pageRows[pageRows.length - 1]![idField]
    const [count] = await this.#called(() => this.handle.run(bind(this.#repeatsStatement(request), last)))
    const n = Number(count?.n ?? 0)
    return n > 1 ? this.#notUnique(`${n} rows have ${idField} equal to "${keyString(last)}" in the database's comparison`) : null
  }

  /**
   * One statement of a page, reported as a call of its own with its outcome and duration (the audit log holds every
   * upstream call: the counts a page runs beside its query are calls too); its error is thrown on to the page.
   */
  async #called<T>(statement: () => Promise<T>): Promise<T> {
    const result = await timed(statement)
    this.ctx.emit({ method: 'SELECT', outcome: 'error' in result ? 'error' : 'ok', durationMs: result.durationMs })
    if ('error' in result) throw result.error
    return result.value
  }

  #notUnique(seen: string): string {
    const { idField, endpoint } = this.ctx
    return `column "${idField}" of ${endpoint} is not unique (${seen}; no primary key or unique index proves it unique): records sharing an id cannot be told apart, and a walk in id order skips rows past one, so none of it can be read as complete; declare a primary key or a unique index on "${idField}", or choose a unique column as id_field`
  }

  /**
   * The rows of the filter that have no id. `id > last` never reaches them, and where NULLs sort first a page
   * would show them as a record "null": they name no record, so the page queries leave them out and the walk
   * counts them here, the answer not complete (`SHAPE_MISMATCH` naming the id field). So are SQLite's rows whose
   * id is a blob (any column keeps one): read, its id was the bytes decoded as UTF-8 (x'FFFF' and x'FEFF' one id,
   * neither found by it again) and a page ending on one left a position no page resumes from. SQLite orders every
   * blob after all text and numbers, so `id >= x''` is exactly those rows, on the id's index.
   */
  async #unkeyedCount(request: ReadPageRequest): Promise<Unkeyed> {
    const key = `unkeyed:${this.#asText.size}:${this.#byCodePoint.size}:${this.#loose.size}:${JSON.stringify(request.filter)}`
    let compiled = this.#statements.get(key)
    if (!compiled) {
      const { ctx } = this
      const id = sql.ref(ctx.idField)
      const where = compileFilter(request.filter, ctx.fields, ctx.dialect, 'filter', this.#compiling)
      let query =
        ctx.dialect === 'sqlite'
          ? ctx.backend.db
              .selectFrom(ctx.table)
              .select([sql<number>`sum(${id} is null)`.as('idless'), sql<number>`sum(${id} >= x'')`.as('bytes')])
              .where(sql<SqlBool>`(${id} is null or ${id} >= x'')`)
          : ctx.backend.db.selectFrom(ctx.table).select([sql<number>`count(*)`.as('idless'), sql<number>`0`.as('bytes')]).where(sql<SqlBool>`${id} is null`)
      if (where) query = query.where(where)
      compiled = query.compile()
      if (this.#statements.size >= STATEMENTS_KEPT) this.#statements.clear()
      this.#statements.set(key, compiled)
    }
    const [count] = await this.#called(() => this.handle.run(compiled!))
    return { idless: Number(count?.idless ?? 0), bytes: Number(count?.bytes ?? 0) }
  }

  /** The rows of the filter whose id equals the slot's, counted by the engine. */
  #repeatsStatement(request: ReadPageRequest): CompiledQuery {
    const key = `repeats:${this.#asText.size}:${this.#byCodePoint.size}:${this.#loose.size}:${JSON.stringify(request.filter)}`
    const cached = this.#statements.get(key)
    if (cached) return cached
    const { ctx } = this
    const where = compileFilter(request.filter, ctx.fields, ctx.dialect, 'filter', this.#compiling)
    let query = ctx.backend.db.selectFrom(ctx.table).select(sql<number>`count(*)`.as('n')).where(sql<SqlBool>`${sql.ref(ctx.idField)} = ${AFTER_SLOT}`)
    if (where) query = query.where(where)
    const compiled = query.compile()
    if (this.#statements.size >= STATEMENTS_KEPT) this.#statements.clear()
    this.#statements.set(key, compiled)
    return compiled
  }

  /** The page judge of a filter: a walk asks with one filter page after page, so it is made once. */
  #judgeOf(filter: ReadPageRequest['filter']): ReturnType<typeof createPageJudge> {
    if (this.#judge?.filter !== filter) this.#judge = { filter, judge: createPageJudge(this.ctx, filter, this.#loose) }
    return this.#judge.judge
  }

  /**
   * The page's rows and the one past it, from the walk's open query: a page that asks for the position the
   * previous one ended at is fetched from there; any other position (a resumed walk, another filter) opens
   * a new query starting after it. The open query ends with the walk, or with the session's transaction.
   */
  async #streamed(request: ReadPageRequest, after: string | number | undefined): Promise<Row[]> {
    const { pageSize } = request
    const key = JSON.stringify(request.filter)
    let walk = this.#walk
    if (!walk || walk.key !== key || walk.position !== request.position) {
      await this.#endWalk()
      const stream = await this.handle.stream!(bind(this.#statementFor(request, after !== undefined, false), after))
      walk = this.#walk = { key, stream, position: request.position, carry: null }
    }
    const fetched = await walk.stream.fetch(walk.carry ? pageSize : pageSize + 1)
    const rows = walk.carry ? [walk.carry, ...fetched] : fetched
    if (rows.length > pageSize) {
      walk.carry = rows[pageSize]!
      walk.position = encodePosition(rows[pageSize - 1]![this.ctx.idField])
    } else await this.#endWalk()
    return rows
  }

  async #endWalk(): Promise<void> {
    const walk = this.#walk
    this.#walk = null
    await walk?.stream.close()
  }

  /**
   * A walk asks for the same query page after page, only the last id changes: it is compiled once per
   * filter and page size, with a slot the id is put in, instead of once per page. `limited`: one page and
   * the row past it; otherwise every row in id order, for a stream.
   */
  #statementFor(request: ReadPageRequest, resumed: boolean, limited = true): CompiledQuery {
    const key = `${resumed ? 'after' : 'first'}:${limited ? request.pageSize : 'all'}:${this.#asText.size}:${this.#byCodePoint.size}:${this.#loose.size}:${this.#idNullable}:${JSON.stringify(request.filter)}`
    const cached = this.#statements.get(key)
    if (cached) return cached
    const { ctx } = this
    const where = compileFilter(request.filter, ctx.fields, ctx.dialect, 'filter', this.#compiling)
    let query = selectRows(ctx)
    if (where) query = query.where(where)
    if (resumed) query = query.where(sql<SqlBool>`${this.#idKey} > ${AFTER_SLOT}`)
    else if (this.#idNullable) query = query.where(sql<SqlBool>`${sql.ref(ctx.idField)} is not null`)
    // a SQLite blob id names no record (see #unkeyedCount): counted, never on a page
    if (ctx.dialect === 'sqlite') query = query.where(sql<SqlBool>`${sql.ref(ctx.idField)} < x''`)
    // one row past the page tells whether there is a next page without a count
    const ordered = query.orderBy(this.#idKey)
    const compiled = limited ? ordered.limit(request.pageSize + 1).compile() : ordered.compile()
    if (this.#statements.size >= STATEMENTS_KEPT) this.#statements.clear()
    this.#statements.set(key, compiled)
    return compiled
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
    this.onRelease(this)
    return (this.#closing ??= this.handle.close().catch(() => undefined))
  }

  #arm() {
    this.#disarm()
    this.#timer = setTimeout(() => void this.expire(), this.ctx.idleTimeoutMs)
    this.#timer.unref()
  }

  #disarm() {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}

/** The sessions a connector has open, so closing the connector can end their transactions. */
export type OpenSessions = Set<{ expire(): Promise<void> }>

/** Opens a read session; an upstream that cannot be reached gives a session whose every read says so. */
export async function openReadSession(ctx: ConnectorContext, sessions: OpenSessions): Promise<ReadSession> {
  const { endpoint } = ctx
  if (ctx.isClosing()) return failedSession(ctx, { kind: 'unavailable', message: `the connector for ${endpoint} is closed` })
  const result = await timed(() => ctx.backend.openHandle())
  if ('error' in result) {
    ctx.emit({ method: 'SELECT', outcome: 'error', durationMs: result.durationMs })
    const message = `cannot open a read session on ${endpoint} (${ctx.location.display}): ${messageOf(result.error)}`
    // a table the database does not have (SQLite reads it as the session opens) is the config, not an outage
    return failedSession(ctx, isMissingTable(result.error) ? { kind: 'refused', message, configKey: 'connector.table' } : { kind: 'unavailable', message })
  }
  ctx.emit({ method: 'SELECT', outcome: 'session_opened', durationMs: result.durationMs })
  // read anew for each session, before its idle clock starts (every page needs them): a migration since the last
  // walk is seen. MyISAM, Aria, MEMORY: START TRANSACTION WITH CONSISTENT SNAPSHOT pins nothing there (facts that
  // could not be read: not assumed)
  const facts = await ctx.catalogue.fresh()
  const consistent = ctx.dialect !== 'mysql' || facts.table?.transactional === true
  // the connector may have closed while the connection was being opened; it would never expire this one
  if (ctx.isClosing()) {
    await result.value.close().catch(() => undefined)
    return failedSession(ctx, { kind: 'unavailable', message: `the connector for ${endpoint} is closed` })
  }
  const session = new SqlReadSession(ctx, result.value, facts, consistent, (released) => sessions.delete(released))
  sessions.add(session)
  return session
}

/** A session that could not be opened: every read says why. */
function failedSession(ctx: ConnectorContext, failure: Extract<ReadPageResult, { kind: 'refused' | 'unavailable' }>): ReadSession {
  return {
    consistentSnapshot: false,
    snapshot: null,
    readPage: async (request) => {
      // a bad filter is still the caller's error, whether or not the upstream is reachable
      compileFilter(request.filter, ctx.fields, ctx.dialect)
      return failure
    },
    close: async () => undefined,
  }
}

type Unjudged = NonNullable<Extract<ReadPageResult, { kind: 'page' }>['unjudged']>

/** A page's tally of unjudged records with the rows that have no id added. */
/** Rows of a walk's filter that name no record: without an id, or (SQLite) with bytes for one. */
interface Unkeyed {
  readonly idless: number
  readonly bytes: number
}
const NONE_UNKEYED: Unkeyed = { idless: 0, bytes: 0 }

/** A page's tally with the walk's unkeyed rows added: idless ones as such, byte ids as the id of another type. */
function withUnkeyed(unjudged: Unjudged | null, { idless, bytes }: Unkeyed, idField: string): Unjudged | null {
  if (idless === 0 && bytes === 0) return unjudged
  const base = unjudged ?? { count: 0, absent: [], mistyped: [] }
  const mistyped = bytes === 0 || base.mistyped.includes(idField) ? base.mistyped : [...base.mistyped, idField]
  return { ...base, count: base.count + idless + bytes, mistyped, ...(idless === 0 ? {} : { idless: { field: idField, count: idless } }) }
}

/** The compiled page query with the last id read in its slot. */
function bind(statement: CompiledQuery, after: unknown): CompiledQuery {
  return after === undefined ? statement : CompiledQuery.raw(statement.sql, statement.parameters.map((p) => (p === AFTER_SLOT ? after : p)))
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
