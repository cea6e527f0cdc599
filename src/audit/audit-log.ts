import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { UpstreamCall } from '../connectors/index.js'
import { canonicalJson, type Actor } from '../contract/index.js'
import type { AuditEventRow, AuditLevel, Database, Store } from '../store/index.js'
import { AUDIT_GENESIS_HASH, hashAuditRow, type UnhashedAuditRow } from './chain.js'
import { readChainHead, writeChainHead } from './head.js'
import { scrubSecrets } from './redact.js'
import { verifyAuditChain, type VerifyResult } from './verify.js'

/** The few log methods the audit log uses; a pino logger fits. */
export interface AuditLogLogger {
  error(fields: object, message: string): void
}

export interface AuditLogOptions {
  readonly store: Store
  /** source of `at`; defaults to the store's clock */
  readonly clock?: () => Date
  /** where failed call-level appends are reported (they never reject); defaults to a JSON line on stderr */
  readonly log?: AuditLogLogger
  /** most rows appended in one transaction; default 500 */
  readonly maxBatch?: number
}

/** A run-level event: who asked for what, on which surface, and what was decided. */
export interface RunEvent {
  /** who asked; null for the gateway's own events */
  readonly actor: Actor | null
  /** defaults to the actor's surface, else `system` */
  readonly surface?: string
  /** the tool or endpoint, e.g. `POST /v1/plans/{id}/approvals` or `mcp:commit_change` */
  readonly action: string
  /** a short summary of the request (ids, counts, filter); secret-like keys are redacted */
  readonly summary?: Readonly<Record<string, unknown>>
  readonly selection_id?: string | null
  readonly plan_id?: string | null
  readonly operation_id?: string | null
  readonly target_id?: string | null
  /**
   * what was decided and by whom, e.g. `{ decision: 'approve', plan_digest, expires_at }`. An event whose
   * details carry `decision` is an approval. The log adds `actor: { name, role }` from the actor.
   */
  readonly details?: Readonly<Record<string, unknown>> | null
}

/** What an upstream call was made for: the operation, plan and selection it served. */
export interface CallContext {
  readonly operation_id?: string | null
  readonly selection_digest?: string | null
  readonly selection_id?: string | null
  readonly plan_id?: string | null
  /** who the call was made for, when known */
  readonly principal?: string | null
}

/** A call-level event: one upstream call, with the operation and selection it served. */
export type CallEvent = UpstreamCall & CallContext

/** One row of the log, with `summary` and `details` parsed (an unparseable one is returned as its text). */
export interface AuditEntry {
  readonly seq: number
  readonly level: AuditLevel
  readonly at: string
  readonly principal: string | null
  readonly surface: string
  readonly action: string
  readonly summary: unknown
  readonly selection_id: string | null
  readonly plan_id: string | null
  readonly operation_id: string | null
  readonly target_id: string | null
  readonly details: unknown
  readonly prev_hash: string
  readonly hash: string
}

export interface AuditQuery {
  readonly operation_id?: string
  readonly plan_id?: string
  readonly selection_id?: string
  readonly principal?: string
  readonly level?: AuditLevel
  /** ISO timestamp; `at >= since` */
  readonly since?: string
  /** ISO timestamp; `at < until` */
  readonly until?: string
  /** the previous page's `next_cursor` */
  readonly after_seq?: number
  /** 1..1000; default 100 */
  readonly limit?: number
}

export interface AuditPage {
  readonly events: AuditEntry[]
  /** pass as `after_seq` for the next page; null when this is the last */
  readonly next_cursor: number | null
}

/** One approval or rejection, as recorded. */
export interface RecordedApproval {
  readonly seq: number
  readonly at: string
  readonly plan_id: string | null
  readonly decision: string
  readonly principal: string | null
  readonly name: string | null
  readonly role: string | null
  readonly surface: string
  readonly action: string
  readonly details: unknown
}

/** One principal that acted on the operation, its plan or its selection (approvals aside). */
export interface Requester {
  readonly principal: string | null
  readonly name: string | null
  readonly role: string | null
  readonly surfaces: string[]
  readonly actions: string[]
  readonly first_at: string
  readonly last_at: string
}

/** "Which process asked for this?": the run-level events for an operation, its plan and its selection. */
export interface WhoAsked {
  readonly operation_id: string
  readonly plan_ids: string[]
  readonly selection_ids: string[]
  readonly requesters: Requester[]
  readonly approvals: RecordedApproval[]
  readonly events: AuditEntry[]
  /** more than {@link WHO_ASKED_LIMIT} events matched; `events` holds the first ones */
  readonly truncated: boolean
}

/** One record an upstream call changed. */
export interface ChangedRecord {
  readonly seq: number
  readonly at: string
  readonly target_id: string | null
  readonly source: string | null
  readonly method: string | null
  readonly endpoint: string | null
  readonly status: number | null
  readonly outcome: string | null
}

export interface RecordsChangedOptions {
  /** also list writes that ended `unknown` (they may have happened); default false */
  readonly include_unknown?: boolean
  readonly after_seq?: number
  /** 1..10000; default 1000 */
  readonly limit?: number
}

/** "Which records changed?": the call-level writes of an operation that succeeded. */
export interface RecordsChanged {
  readonly operation_id: string
  readonly records: ChangedRecord[]
  readonly next_cursor: number | null
}

export interface AuditLog {
  /** Append a run-level event; resolves once it is committed, with its seq and hash. */
  record(event: RunEvent): Promise<AuditEntry>
  /**
   * Append a call-level event. Synchronous and never throws or rejects: the row is queued and appended in
   * order with others in one transaction; a failure is logged. `flush()` waits for it.
   */
  recordCall(call: CallEvent): void
  /**
   * A connector `onCall` listener that records each call with a fixed context, e.g. for one operation's
   * executor: `createSqlConnector({ resource, onCall: audit.callRecorder({ operation_id, selection_digest }) })`.
   */
  callRecorder(context?: CallContext): (call: UpstreamCall) => void
  /** Resolves when everything queued so far has been written (or has failed and been logged). */
  flush(): Promise<void>
  verify(): Promise<VerifyResult>
  query(filter?: AuditQuery): Promise<AuditPage>
  /** Every row as stored (summary and details as their JSON text, so hashes can be recomputed), one JSON line each, ending in `\n`. */
  exportNdjson(): AsyncIterable<string>
  whoAsked(operationId: string): Promise<WhoAsked>
  recordsChanged(operationId: string, options?: RecordsChangedOptions): Promise<RecordsChanged>
}

/** Call outcomes that mean a write happened upstream. */
export const WRITE_SUCCEEDED_OUTCOMES = ['written', 'succeeded'] as const
/** A write without a durable answer: it may have happened. */
export const WRITE_UNKNOWN_OUTCOMES = ['unknown'] as const

/** Surface recorded on call-level rows. */
export const UPSTREAM_SURFACE = 'upstream'

export const WHO_ASKED_LIMIT = 5000
const DEFAULT_QUERY_LIMIT = 100
const MAX_QUERY_LIMIT = 1000
const EXPORT_PAGE_SIZE = 1000
const DEFAULT_MAX_BATCH = 500
const INSERT_CHUNK = 100
const MAX_ATTEMPTS = 8

/**
 * PostgreSQL advisory lock taken by every append transaction, so appends from every gateway instance
 * sharing the database form one chain. The number is arbitrary and fixed ("WRNTAUDT" would not fit).
 */
export const AUDIT_ADVISORY_LOCK_KEY = 7_310_551_044_205_061

type NewRow = Omit<UnhashedAuditRow, 'seq' | 'prev_hash'>

interface Pending {
  readonly row: NewRow
  readonly resolve?: (row: AuditEventRow) => void
  readonly reject?: (error: unknown) => void
}

/**
 * The two-level, hash-chained, append-only audit log.
 *
 * @example
 * const audit = createAuditLog({ store, log })
 * await audit.record({ actor, action: 'POST /v1/plans/{id}/approvals', plan_id, summary: { plan_id }, details: { decision: 'approve', plan_digest } })
 * const connector = createSqlConnector({ resource, onCall: (call) => audit.recordCall({ ...call, operation_id }) })
 * const result = await audit.verify() // { ok: true, rows } or the first bad row
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { store } = options
  const db = store.db
  const now = options.clock ? () => options.clock!().toISOString() : () => store.now()
  const log = options.log ?? stderrLog
  const maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH)

  const queue: Pending[] = []
  let draining: Promise<void> | null = null

  function enqueue(item: Pending): void {
    queue.push(item)
    // Started on the next microtask, so a synchronous burst of calls shares one transaction.
    if (draining === null) draining = Promise.resolve().then(drain)
  }

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, maxBatch)
        await appendBatch(batch)
      }
    } finally {
      draining = null
    }
  }

  async function appendBatch(batch: Pending[]): Promise<void> {
    try {
      settle(batch, await appendWithRetry(batch.map((p) => p.row)))
      return
    } catch (error) {
      // A store that cannot answer at all (closed, unreachable) fails the whole batch at once.
      if (batch.length === 1 || !(await storeAnswers())) return fail(batch, error)
    }
    // Otherwise one bad row must not take the others down with it: append them one at a time.
    const failed: Pending[] = []
    let lastError: unknown
    for (const item of batch) {
      try {
        settle([item], await appendWithRetry([item.row]))
      } catch (error) {
        lastError = error
        failed.push(item)
      }
    }
    if (failed.length > 0) fail(failed, lastError)
  }

  async function storeAnswers(): Promise<boolean> {
    try {
      await db.selectFrom('kv').select('key').limit(1).execute()
      return true
    } catch {
      return false
    }
  }

  function settle(batch: Pending[], rows: AuditEventRow[]): void {
    batch.forEach((item, i) => item.resolve?.(rows[i]!))
  }

  function fail(batch: Pending[], error: unknown): void {
    const unreported = batch.filter((item) => !item.reject)
    for (const item of batch) item.reject?.(error)
    if (unreported.length > 0) report(error, unreported.map(({ row }) => ({ level: row.level, action: row.action, operation_id: row.operation_id, target_id: row.target_id, at: row.at })))
  }

  /** Log events that were dropped; a broken logger must not break the caller either. */
  function report(error: unknown, dropped: object[]): void {
    try {
      log.error({ err: error, dropped: dropped.length, events: dropped.slice(0, 20) }, 'audit: events could not be appended')
    } catch {
      // nothing left to tell
    }
  }

  async function appendWithRetry(rows: NewRow[]): Promise<AuditEventRow[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await appendOnce(rows)
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error
        await sleep(Math.min(250, 5 * 2 ** attempt) * (0.5 + Math.random()))
      }
    }
  }

  /** One transaction that holds the chain's write lock: read the tip, insert the rows, move the head. */
  async function appendOnce(rows: NewRow[]): Promise<AuditEventRow[]> {
    if (store.dialect === 'postgres') {
      return db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${sql.lit(AUDIT_ADVISORY_LOCK_KEY)})`.execute(trx)
        return writeRows(trx, rows)
      })
    }
    // SQLite: kysely runs every query on one connection behind a mutex, which `connection()` holds for the
    // whole callback (serialising this process); BEGIN IMMEDIATE takes the database's write lock before the
    // tip is read (serialising other processes; they wait for it up to the store's busy timeout).
    return db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn)
      try {
        const written = await writeRows(conn, rows)
        await sql`commit`.execute(conn)
        return written
      } catch (error) {
        await sql`rollback`.execute(conn).catch(() => undefined)
        throw error
      }
    })
  }

  async function writeRows(tx: Kysely<Database>, rows: NewRow[]): Promise<AuditEventRow[]> {
    // Continue from the head when it is ahead of the last row: rows removed from the end stay a visible gap.
    const head = await readChainHead(tx)
    const last = await tx.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirst()
    const tip = head && (!last || head.seq >= last.seq) ? head : (last ?? { seq: 0, hash: AUDIT_GENESIS_HASH })
    let seq = tip.seq
    let prev = tip.hash
    const written = rows.map((row): AuditEventRow => {
      seq += 1
      const unhashed: UnhashedAuditRow = { ...row, seq, prev_hash: prev }
      prev = hashAuditRow(unhashed)
      return { ...unhashed, hash: prev }
    })
    for (let i = 0; i < written.length; i += INSERT_CHUNK) await tx.insertInto('audit_events').values(written.slice(i, i + INSERT_CHUNK)).execute()
    await writeChainHead(tx, { seq, hash: prev })
    return written
  }

  function runRow(event: RunEvent): NewRow {
    const actor = event.actor
    const details =
      event.details == null && actor === null
        ? null
        : json({ ...(actor ? { actor: { name: actor.name, role: actor.role } } : {}), ...(event.details ?? {}) })
    return {
      level: 'run',
      at: now(),
      principal: actor?.principal ?? null,
      surface: event.surface ?? actor?.surface ?? 'system',
      action: event.action,
      summary: json(event.summary ?? {}),
      selection_id: event.selection_id ?? null,
      plan_id: event.plan_id ?? null,
      operation_id: event.operation_id ?? null,
      target_id: event.target_id ?? null,
      details,
    }
  }

  function callRow(call: CallEvent): NewRow {
    return {
      level: 'call',
      at: now(),
      principal: call.principal ?? null,
      surface: UPSTREAM_SURFACE,
      action: `${call.method} ${call.endpoint}`,
      summary: json({
        source: call.source,
        method: call.method,
        endpoint: call.endpoint,
        status: call.status,
        outcome: call.outcome,
        duration_ms: call.durationMs,
        ...(call.selection_digest ? { selection_digest: call.selection_digest } : {}),
      }),
      selection_id: call.selection_id ?? null,
      plan_id: call.plan_id ?? null,
      operation_id: call.operation_id ?? null,
      target_id: call.targetId ?? null,
      details: null,
    }
  }

  function recordCall(call: CallEvent): void {
    try {
      enqueue({ row: callRow(call) })
    } catch (error) {
      report(error, [{ level: 'call', action: `${call?.method} ${call?.endpoint}`, operation_id: call?.operation_id ?? null, target_id: call?.targetId ?? null }])
    }
  }

  const outcomeIn = (outcomes: readonly string[]) =>
    sql<boolean>`(${sql.join(
      outcomes.map((o) => {
        // Call-level summaries are canonical JSON written by this module: the member appears exactly so.
        const needle = `"outcome":${JSON.stringify(o)}`
        return store.dialect === 'postgres' ? sql`strpos(summary, ${needle}) > 0` : sql`instr(summary, ${needle}) > 0`
      }),
      sql` or `,
    )})`

  return {
    record(event) {
      let row: NewRow
      try {
        row = runRow(event)
      } catch (error) {
        return Promise.reject(error)
      }
      return new Promise<AuditEventRow>((resolve, reject) => enqueue({ row, resolve, reject })).then(toEntry)
    },

    recordCall,

    callRecorder(context = {}) {
      return (call) => recordCall({ ...call, ...context })
    },

    async flush() {
      while (draining !== null) await draining
    },

    verify: () => verifyAuditChain(db),

    async query(filter = {}) {
      const limit = clampLimit(filter.limit, DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT)
      let q = db.selectFrom('audit_events').selectAll().orderBy('seq').limit(limit + 1)
      if (filter.operation_id !== undefined) q = q.where('operation_id', '=', filter.operation_id)
      if (filter.plan_id !== undefined) q = q.where('plan_id', '=', filter.plan_id)
      if (filter.selection_id !== undefined) q = q.where('selection_id', '=', filter.selection_id)
      if (filter.principal !== undefined) q = q.where('principal', '=', filter.principal)
      if (filter.level !== undefined) q = q.where('level', '=', filter.level)
      if (filter.since !== undefined) q = q.where('at', '>=', filter.since)
      if (filter.until !== undefined) q = q.where('at', '<', filter.until)
      if (filter.after_seq !== undefined) q = q.where('seq', '>', filter.after_seq)
      const rows = await q.execute()
      const page = rows.slice(0, limit)
      return { events: page.map(toEntry), next_cursor: rows.length > limit ? page[page.length - 1]!.seq : null }
    },

    async *exportNdjson() {
      let after: number | null = null
      for (;;) {
        let q = db.selectFrom('audit_events').selectAll().orderBy('seq').limit(EXPORT_PAGE_SIZE)
        if (after !== null) q = q.where('seq', '>', after)
        const rows = await q.execute()
        for (const row of rows) yield `${JSON.stringify(storedRow(row))}\n`
        if (rows.length < EXPORT_PAGE_SIZE) return
        after = rows[rows.length - 1]!.seq
      }
    },

    async whoAsked(operationId) {
      // One statement: the operation's plans (from its own events and the operations table), their
      // selections, then every run-level event of the operation, or of those plans and selections that
      // belongs to no other operation or plan.
      const planIds = db
        .selectFrom('audit_events')
        .select('plan_id')
        .where('operation_id', '=', operationId)
        .where('plan_id', 'is not', null)
        .union(db.selectFrom('operations').select('plan_id').where('id', '=', operationId))
      const selectionIds = db
        .selectFrom('audit_events')
        .select('selection_id')
        .where('selection_id', 'is not', null)
        .where((eb) => eb.or([eb('operation_id', '=', operationId), eb('plan_id', 'in', planIds)]))
        .union(db.selectFrom('plans').select('selection_id').where('id', 'in', planIds))
      const rows = await db
        .selectFrom('audit_events')
        .selectAll()
        .where('level', '=', 'run')
        .where((eb) =>
          eb.or([
            eb('operation_id', '=', operationId),
            eb.and([eb('operation_id', 'is', null), eb('plan_id', 'in', planIds)]),
            eb.and([eb('operation_id', 'is', null), eb('plan_id', 'is', null), eb('selection_id', 'in', selectionIds)]),
          ]),
        )
        .orderBy('seq')
        .limit(WHO_ASKED_LIMIT + 1)
        .execute()
      const events = rows.slice(0, WHO_ASKED_LIMIT).map(toEntry)
      return summariseWhoAsked(operationId, events, rows.length > WHO_ASKED_LIMIT)
    },

    async recordsChanged(operationId, opts = {}) {
      const limit = clampLimit(opts.limit, 1000, 10_000)
      const outcomes = [...WRITE_SUCCEEDED_OUTCOMES, ...(opts.include_unknown ? WRITE_UNKNOWN_OUTCOMES : [])]
      let q = db
        .selectFrom('audit_events')
        .select(['seq', 'at', 'target_id', 'summary'])
        .where('level', '=', 'call')
        .where('operation_id', '=', operationId)
        .where(outcomeIn(outcomes))
        .orderBy('seq')
        .limit(limit + 1)
      if (opts.after_seq !== undefined) q = q.where('seq', '>', opts.after_seq)
      const rows = await q.execute()
      const page = rows.slice(0, limit)
      return {
        operation_id: operationId,
        records: page.map((row) => {
          const s = asRecord(parseJson(row.summary))
          return {
            seq: row.seq,
            at: row.at,
            target_id: row.target_id,
            source: stringOrNull(s.source),
            method: stringOrNull(s.method),
            endpoint: stringOrNull(s.endpoint),
            status: typeof s.status === 'number' ? s.status : null,
            outcome: stringOrNull(s.outcome),
          }
        }),
        next_cursor: rows.length > limit ? page[page.length - 1]!.seq : null,
      }
    },
  }
}

function summariseWhoAsked(operationId: string, events: AuditEntry[], truncated: boolean): WhoAsked {
  const plans = new Set<string>()
  const selections = new Set<string>()
  const approvals: RecordedApproval[] = []
  const requesters = new Map<string, { principal: string | null; name: string | null; role: string | null; surfaces: Set<string>; actions: Set<string>; first_at: string; last_at: string }>()
  for (const event of events) {
    if (event.plan_id) plans.add(event.plan_id)
    if (event.selection_id) selections.add(event.selection_id)
    const details = asRecord(event.details)
    const actor = asRecord(details.actor)
    const name = stringOrNull(actor.name)
    const role = stringOrNull(actor.role)
    if (typeof details.decision === 'string') {
      approvals.push({ seq: event.seq, at: event.at, plan_id: event.plan_id, decision: details.decision, principal: event.principal, name, role, surface: event.surface, action: event.action, details: event.details })
      continue
    }
    const key = event.principal ?? '(system)'
    const seen = requesters.get(key)
    if (seen) {
      seen.surfaces.add(event.surface)
      seen.actions.add(event.action)
      seen.last_at = event.at
      seen.name ??= name
      seen.role ??= role
    } else {
      requesters.set(key, { principal: event.principal, name, role, surfaces: new Set([event.surface]), actions: new Set([event.action]), first_at: event.at, last_at: event.at })
    }
  }
  return {
    operation_id: operationId,
    plan_ids: [...plans],
    selection_ids: [...selections],
    requesters: [...requesters.values()].map((r) => ({ ...r, surfaces: [...r.surfaces], actions: [...r.actions] })),
    approvals,
    events,
    truncated,
  }
}

/** A row as stored, columns in table order: what the export writes and what the hash covers. */
function storedRow(row: AuditEventRow): AuditEventRow {
  return {
    seq: row.seq,
    level: row.level,
    at: row.at,
    principal: row.principal,
    surface: row.surface,
    action: row.action,
    summary: row.summary,
    selection_id: row.selection_id,
    plan_id: row.plan_id,
    operation_id: row.operation_id,
    target_id: row.target_id,
    details: row.details,
    prev_hash: row.prev_hash,
    hash: row.hash,
  }
}

export function toEntry(row: AuditEventRow): AuditEntry {
  return { ...storedRow(row), summary: parseJson(row.summary), details: row.details === null ? null : parseJson(row.details) }
}

/** Canonical JSON of the value with secrets redacted. */
function json(value: unknown): string {
  return canonicalJson(scrubSecrets(value))
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback
  return Math.min(max, Math.max(1, Math.floor(limit)))
}

const RETRYABLE_CODES = new Set([
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_LOCKED',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  '23505', // unique_violation: a seq taken by a writer that did not hold the lock
  '40001', // serialization_failure
  '40P01', // deadlock_detected
])

function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && RETRYABLE_CODES.has(code)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

const stderrLog: AuditLogLogger = {
  error(fields, message) {
    const err = (fields as { err?: unknown }).err
    const line = { level: 'error', msg: message, ...fields, err: err instanceof Error ? { message: err.message, code: (err as { code?: unknown }).code } : err }
    process.stderr.write(`${JSON.stringify(line)}\n`)
  },
}
