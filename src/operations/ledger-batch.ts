import type BetterSqlite3 from 'better-sqlite3'
import { CompiledQuery, PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely'
import { preparedOnce } from '../contract/index.js'
import { commitJoinerOf, leaseNow, sqliteHandleOf, syncedSqliteCommit, unsyncedSqliteCommit, type Database, type JoinedWrites } from '../store/index.js'

/**
 * Group commit for the per-target ledger. Transitions asked for while the previous group commits (the
 * executor's workers each putting a target in flight or recording its answer) are written in one transaction,
 * and every caller is answered only once that transaction has committed: `in_flight` is as durable when
 * `markInFlight` returns as when each target had its own transaction, but a SQLite store syncs once for the
 * whole group instead of once per target. While one group commits, the next one gathers (on PostgreSQL, a
 * round trip; a SQLite commit is synchronous, so there groups form only among requests made in the same tick).
 */

type Db = Kysely<Database>

/** How long an outcome waits for others before its group commits (an `in_flight` mark starts it at once). */
const UPDATE_LINGER_MS = 10
/** A group this large commits without waiting. */
const MAX_GROUP = 500

export type LedgerJob =
  | { readonly kind: 'in_flight'; readonly operationId: string; readonly ord: number; readonly owner: string; readonly now: string }
  | {
      readonly kind: 'update'
      readonly operationId: string
      readonly ord: number
      readonly set: Readonly<Record<string, unknown>>
      readonly fromState: 'in_flight'
      /** may wait for others (an outcome nobody waits on); otherwise committed at once, like an in-flight mark */
      readonly linger?: boolean
    }

interface Pending {
  readonly job: LedgerJob
  resolve(changed: boolean): void
  reject(error: unknown): void
}

const batches = new WeakMap<Db, LedgerBatch>()

/** The group committer of one store handle. */
export function ledgerBatch(db: Db): LedgerBatch {
  let batch = batches.get(db)
  if (!batch) batches.set(db, (batch = new LedgerBatch(db)))
  return batch
}

/**
 * On PostgreSQL, in-flight marks and outcomes commit in two lanes, each its own group committer on its own pooled
 * connection: a window's claim no longer waits behind the outcomes of the window before it (a transaction of
 * several round trips and a WAL flush; claims waited ~15 ms for ~5 of their own). The lanes touch different rows
 * at any one time: a target's outcome is asked for only after its mark has committed, and a target put back to
 * pending (a 429, a window never started) is claimed again only after that has committed (the executor awaits
 * both). On SQLite one connection serialises every commit anyway, so there is one lane, and marks and outcomes
 * asked for in the same turn still share one sync.
 */
export class LedgerBatch {
  readonly dialect: 'sqlite' | 'postgres'
  readonly #outcomes: LedgerLane
  readonly #marks: LedgerLane

  constructor(db: Db) {
    // the ledger is handed the store's kysely alone; its adapter says which SQL the bulk update speaks
    this.dialect = db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
    this.#outcomes = new LedgerLane(db, this.dialect)
    this.#marks = this.dialect === 'postgres' ? new LedgerLane(db, this.dialect) : this.#outcomes
  }

  /** Resolves with whether the row changed, once the transaction holding it has committed. */
  submit(job: LedgerJob): Promise<boolean> {
    return (job.kind === 'in_flight' ? this.#marks : this.#outcomes).submit(job)
  }
}

class LedgerLane {
  #queue: Pending[] = []
  #busy = false
  #lingering: ReturnType<typeof setTimeout> | null = null
  /** SQLite: the outcome updates, each prepared once on the store's connection (see `updateMany`) */
  readonly #outcomeStatements: ((text: string) => BetterSqlite3.Statement) | null

  constructor(
    private readonly db: Db,
    readonly dialect: 'sqlite' | 'postgres',
  ) {
    const raw = dialect === 'sqlite' ? sqliteHandleOf(db) : undefined
    this.#outcomeStatements = raw ? preparedOnce((text) => raw.prepare(text)) : null
  }

  submit(job: LedgerJob): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ job, resolve, reject })
      if (this.#busy) return // what is asked for while a group commits joins the next group
      if (job.kind === 'in_flight' || !job.linger) {
        // Started at once (a microtask later): waiting for the next turn of the loop would widen the gap between
        // a worker's pacer slot and its write, and a 429 answered meanwhile must pause every later write.
        // Outcomes waiting for company go with it.
        this.#start()
        queueMicrotask(() => void this.#drain())
      } else if (this.#lingering === null && this.#queue.length < MAX_GROUP) {
        // An outcome: no upstream call waits for it (the executor moves on), so it waits up to UPDATE_LINGER_MS for
        // others; on SQLite, where a commit blocks the loop, that is one sync per window of answers, not one each.
        this.#lingering = setTimeout(() => {
          this.#lingering = null
          if (this.#busy) return
          this.#busy = true
          void this.#drain()
        }, UPDATE_LINGER_MS)
      } else if (this.#queue.length >= MAX_GROUP) {
        this.#start()
        queueMicrotask(() => void this.#drain())
      }
    })
  }

  #start(): void {
    if (this.#lingering !== null) clearTimeout(this.#lingering)
    this.#lingering = null
    this.#busy = true
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue
      this.#queue = []
      try {
        const changed = new Array<boolean>(group.length).fill(false)
        const statements = statementsFor(group.map((p) => p.job), changed, this.dialect, this.#outcomeStatements)
        // one statement is atomic and durable on its own (autocommit): no BEGIN and COMMIT round trips for it. On
        // SQLite a group's updates are one statement per row, so they always share a transaction (one sync).
        let joined: JoinedWrites | null = null
        try {
          if (statements.length === 1 && this.dialect === 'postgres') await statements[0]!(this.db)
          else {
            const work = async (trx: Kysely<Database>) => {
              for (const statement of statements) await statement(trx)
              // what another module holds ready (the audit rows of the upstream calls that decided these
              // outcomes) commits with them: one sync where there were two or three (see joinCommits)
              if (this.dialect === 'sqlite') joined = await (commitJoinerOf(this.db)?.join(trx) ?? null)
            }
            if (this.dialect === 'postgres') await this.db.transaction().execute(work)
            // On SQLite a group of outcomes alone commits without its own sync: the next in-flight mark's synced
            // commit, which comes before any further upstream call, makes it durable (see unsyncedSqliteCommit).
            // A group holding a mark is synced, the setting made FULL again right before it.
            else if (group.some((p) => p.job.kind === 'in_flight')) await syncedSqliteCommit(this.db, work)
            else await unsyncedSqliteCommit(this.db, work)
          }
        } catch (error) {
          ;(joined as JoinedWrites | null)?.rolledBack(error)
          throw error
        }
        ;(joined as JoinedWrites | null)?.committed()
        group.forEach((p, i) => p.resolve(changed[i]!))
      } catch (error) {
        for (const p of group) p.reject(error)
      }
    }
    this.#busy = false
  }
}

/** The SQL type of each column an update job may set (everything else the ledger stores is text). */
const UPDATE_COLUMNS: Readonly<Record<string, 'text' | 'integer'>> = {
  state: 'text',
  reason: 'text',
  error: 'text',
  upstream_status: 'integer',
  before: 'text',
  after: 'text',
  after_version: 'text',
  unknown_since: 'text',
  updated_at: 'text',
}

/** One statement of a group, run in the group's transaction (or alone, when it is the group's only one). */
type Statement = (db: Kysely<Database> | Transaction<Database>) => Promise<void>

/**
 * The statements that apply the jobs: in-flight marks of one operation and owner are one statement, and so
 * are the updates of one operation that set the same columns (a window's outcomes: one round trip on
 * PostgreSQL; on SQLite one UPDATE by key per row, built once). Each statement records in `changed` which jobs
 * it applied.
 */
function statementsFor(jobs: readonly LedgerJob[], changed: boolean[], dialect: 'sqlite' | 'postgres', prepared: ((text: string) => BetterSqlite3.Statement) | null): Statement[] {
  const statements: Statement[] = []
  const inFlight = new Map<string, { operationId: string; owner: string; now: string; at: Map<number, number> }>()
  const updates = new Map<string, { operationId: string; fromState: string; columns: string[]; at: Map<number, number> }>()
  const updateOrds = jobs.flatMap((job) => (job.kind === 'update' ? [`${job.operationId}\u0000${job.ord}`] : []))
  // a target updated twice in one group keeps the order the updates were asked in: each runs alone
  const grouped = new Set(updateOrds).size === updateOrds.length
  for (const [i, job] of jobs.entries()) {
    if (job.kind === 'update' && grouped) {
      const columns = Object.keys(job.set).sort()
      if (columns.every((c) => UPDATE_COLUMNS[c] !== undefined)) {
        const key = `${job.operationId}\u0000${job.fromState}\u0000${columns.join(',')}`
        let group = updates.get(key)
        if (!group) updates.set(key, (group = { operationId: job.operationId, fromState: job.fromState, columns, at: new Map() }))
        group.at.set(job.ord, i)
        continue
      }
    }
    if (job.kind === 'update') {
      statements.push(async (db) => {
        const result = await db
          .updateTable('operation_targets')
          .set(job.set)
          .where('operation_id', '=', job.operationId)
          .where('ord', '=', job.ord)
          .where('state', '=', job.fromState)
          .executeTakeFirst()
        changed[i] = Number(result.numUpdatedRows) === 1
      })
      continue
    }
    const key = `${job.operationId}\u0000${job.owner}`
    let group = inFlight.get(key)
    if (!group) inFlight.set(key, (group = { operationId: job.operationId, owner: job.owner, now: job.now, at: new Map() }))
    // the latest clock reading of the group: the lease must still be live then (the stricter test)
    if (job.now > group.now) group.now = job.now
    group.at.set(job.ord, i)
  }
  for (const group of updates.values()) {
    const rows = [...group.at.entries()].map(([ord, i]) => {
      const job = jobs[i] as Extract<LedgerJob, { kind: 'update' }>
      return { ord, ...Object.fromEntries(group.columns.map((c) => [c, job.set[c] ?? null])) }
    })
    statements.push(async (db) => {
      for (const ord of await updateMany(db, dialect, group.operationId, group.fromState, group.columns, rows, prepared)) {
        const i = group.at.get(ord)
        if (i !== undefined) changed[i] = true
      }
    })
  }
  for (const group of inFlight.values()) {
    statements.push(async (db) => {
      const ords = [...group.at.keys()]
      const rows = dialect === 'sqlite' ? (await db.executeQuery(sqliteInFlight(group.operationId, ords, group.owner, group.now))).rows : await inFlightBuilt(db, group.operationId, ords, group.owner, group.now)
      for (const row of rows) {
        const i = group.at.get(Number(row.ord))
        if (i !== undefined) changed[i] = true
      }
    })
  }
  return statements
}

/** The in-flight UPDATE text on SQLite for each count of ords (see sqliteInFlight). */
const inFlightTexts = new Map<number, string>()

/**
 * The in-flight marks of one operation and owner on SQLite, the statement `inFlightBuilt` builds: the rows still
 * pending, only while `owner` holds a lease live at `now`. Its text is built once per count of ords (the builder's
 * expression callbacks and compile ran again for every window, on the executor's hot path).
 */
function sqliteInFlight(operationId: string, ords: readonly number[], owner: string, now: string): CompiledQuery<{ ord: number }> {
  let text = inFlightTexts.get(ords.length)
  if (text === undefined) {
    text =
      `update "operation_targets" set "state" = ?, "attempts" = "attempts" + ?, "updated_at" = ? where "operation_id" = ? and "ord" in (${ords.map(() => '?').join(', ')}) and "state" = ? ` +
      `and exists (select 1 as "one" from "operations" where "id" = ? and "lease_owner" = ? and "lease_expires_at" > ?) returning "ord"`
    inFlightTexts.set(ords.length, text)
  }
  return CompiledQuery.raw(text, ['in_flight', 1, now, operationId, ...ords, 'pending', operationId, owner, now])
}

/** The in-flight marks of one operation and owner, built (PostgreSQL: the lease judged on the database's clock). */
function inFlightBuilt(db: Kysely<Database> | Transaction<Database>, operationId: string, ords: readonly number[], owner: string, now: string): Promise<{ ord: number }[]> {
  return db
    .updateTable('operation_targets')
    .set((eb) => ({ state: 'in_flight', attempts: eb('attempts', '+', 1), updated_at: now }))
    .where('operation_id', '=', operationId)
    .where('ord', 'in', ords)
    .where('state', '=', 'pending')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('operations')
          .select(sql<number>`1`.as('one'))
          .where('id', '=', operationId)
          .where('lease_owner', '=', owner)
          .where('lease_expires_at', '>', leaseNow(db, now)),
      ),
    )
    .returning('ord')
    .execute()
}

/**
 * The updates of many rows: on PostgreSQL one UPDATE … FROM, each row's values travelling in one JSON parameter;
 * on SQLite one UPDATE by key per row. Only rows still in `fromState` change. Returns the ords that changed.
 */
async function updateMany(
  trx: Kysely<Database> | Transaction<Database>,
  dialect: 'sqlite' | 'postgres',
  operationId: string,
  fromState: string,
  columns: readonly string[],
  rows: readonly Record<string, unknown>[],
  prepared: ((text: string) => BetterSqlite3.Statement) | null,
): Promise<number[]> {
  if (dialect === 'postgres') {
    const json = JSON.stringify(rows)
    const assignments = sql.join(columns.map((c) => sql`${sql.id(c)} = v.${sql.id(c)}`))
    const shape = sql.join([sql`ord bigint`, ...columns.map((c) => sql`${sql.id(c)} ${sql.raw(UPDATE_COLUMNS[c]!)}`)])
    // `ord = any(…)` lets the key drive the join: without it PostgreSQL hashes the JSON rows and scans every target
    // of the operation (4.7 ms a group at 20,000 targets, against 0.1 ms)
    const ords = rows.map((r) => r.ord)
    const result = await sql<{ ord: string | number }>`
      update operation_targets as t set ${assignments}
      from json_to_recordset(${json}::json) as v(${shape})
      where t.operation_id = ${operationId} and t.ord = any(${ords}::bigint[]) and t.ord = v.ord and t.state = ${fromState}
      returning t.ord`.execute(trx)
    return result.rows.map((r) => Number(r.ord))
  }
  // SQLite plans UPDATE … FROM json_each(?) as a scan of every target of the operation per group (the JSON has no
  // index to drive the join): 2.9 ms a group at 2,000 targets, growing with the operation. There is no round trip
  // to save in-process, so one UPDATE by key per row, its SQL built once (the store prepares it once).
  const text = `update operation_targets set ${columns.map((c) => `"${c}" = ?`).join(', ')} where operation_id = ? and ord = ? and state = ? returning ord`
  const changed: number[] = []
  if (prepared !== null) {
    // Run on the store's connection directly, inside the group's transaction (it holds the connection and the
    // write lock, and its COMMIT is what the store checks): through kysely each row was an async round of
    // promises (executor, plugin, busy wait), about as much CPU as the row's own update, for every target.
    const statement = prepared(text)
    for (const row of rows) if (statement.all(...columns.map((c) => row[c] ?? null), operationId, row.ord, fromState).length > 0) changed.push(Number(row.ord))
    return changed
  }
  for (const row of rows) {
    const result = await trx.executeQuery<{ ord: number }>(CompiledQuery.raw(text, [...columns.map((c) => row[c] ?? null), operationId, row.ord, fromState]))
    if (result.rows.length > 0) changed.push(Number(row.ord))
  }
  return changed
}
