import type { Database as SqliteDatabase, Statement } from 'better-sqlite3'
import { sql, type Kysely, type Transaction } from 'kysely'
import { WarrantError, createListDigest } from '../contract/index.js'
import { inSlices, unsyncedSqliteCommit, type Database, type Store } from '../store/index.js'
import { digestEntry, groupCounts, recomputeDigest, renumber } from './freeze.js'
import { GroupTally } from './group-tally.js'
import { compareIds } from './id-order.js'
import { memberIdsOn } from './load.js'
import { SkeletonHashes, type StoredLookalikes, groupsWhereMet } from './lookalike-groups.js'
import type { GroupCount } from './selection-service.js'

/**
 * Freezing a selection as its inventory streams in. Members and excluded records are buffered and written in
 * batches, each one statement per table in one transaction (on PostgreSQL the rows travel as two JSON arrays,
 * `splitFields`: nothing to compile per row, no bound-parameter limit), so memory stays flat however large the selection; a batch's
 * commit does not wait for the disk (the one that freezes the selection does, see `flush`). The order is decided on the immutable id (code-point
 * order). When the walk delivers ids in that order (one SQL source, keyset-paged), ords are final as written
 * and the digest and group counts are computed on the fly; otherwise (several sources, an HTTP upstream in its
 * own order) the rows are renumbered in the store and the digest is recomputed from it.
 *
 * On a SQLite store the rows go through two statements prepared once and run row by row on the store's
 * connection inside the batch's transaction (each row's fields JSON is made there and bound as it is); the loop
 * hands the event loop a turn every slice.
 */

/**
 * Rows buffered before they are written: one transaction per batch. A batch is held across the walk's awaits, so
 * V8 promotes it to the old generation: at 5,000 rows the heap's high-water mark was ~50 MB higher (peak RSS 228
 * against 180 MB freezing 100,000 members), for no measurable gain in time (a sync per 1,000 rows is ~0.5 ms).
 */
const BATCH_ROWS = 1_000
/** Longest run of SQLite inserts before the event loop gets a turn (the transaction stays open across it). */
const SLICE_MS = 10

export interface FrozenRow {
  readonly id: string
  readonly version: string | null
  readonly fields: Readonly<Record<string, unknown>>
  readonly source: string | null
}

type Fields = FrozenRow['fields']
/** [ord, record_id, version, fields, source] for members; the rule first for excluded records. */
type MemberTuple = [number, string, string | null, Fields, string | null]
type ExclusionTuple = [string, number, string, string | null, Fields, string | null]

export class MemberWriter {
  readonly #store: Store
  readonly #db: Kysely<Database>
  readonly #selectionId: string
  readonly #groups: GroupTally
  readonly #digest = createListDigest()
  /** The look-alike check's first pass, made as the ids go by: 8 bytes a member (see `lookalikes`). */
  readonly #skeletons = new SkeletonHashes()
  readonly #exclusionCounts = new Map<string, number>()
  readonly #lastExcluded = new Map<string, string>()
  #count = 0
  #lastMember: string | null = null
  #membersSorted = true
  #exclusionsSorted = true
  #members: MemberTuple[] = []
  #excluded: ExclusionTuple[] = []
  #sqliteInserts: { members: Statement; exclusions: Statement } | null = null

  constructor(store: Store, selectionId: string, rules: readonly string[], groupBy: readonly string[]) {
    this.#store = store
    this.#db = store.db
    this.#selectionId = selectionId
    this.#groups = new GroupTally(groupBy)
    for (const rule of rules) this.#exclusionCounts.set(rule, 0)
  }

  get count(): number {
    return this.#count
  }

  /** Records removed per rule, in the rules' order. */
  get exclusionCounts(): ReadonlyMap<string, number> {
    return this.#exclusionCounts
  }

  /** Takes one page's members and excluded records; writes once a batch is full. */
  async write(members: readonly FrozenRow[], excluded: readonly (FrozenRow & { readonly rule: string })[]): Promise<void> {
    for (const m of members) {
      if (this.#lastMember !== null && compareIds(m.id, this.#lastMember) <= 0) this.#membersSorted = false
      this.#lastMember = m.id
      this.#count += 1
      this.#digest.add(digestEntry(m.id, m.version))
      this.#groups.add(m.fields)
      this.#skeletons.add(m.id)
      this.#members.push([this.#count, m.id, m.version, m.fields, m.source])
    }
    for (const e of excluded) {
      const last = this.#lastExcluded.get(e.rule)
      if (last !== undefined && compareIds(e.id, last) <= 0) this.#exclusionsSorted = false
      this.#lastExcluded.set(e.rule, e.id)
      const ord = (this.#exclusionCounts.get(e.rule) ?? 0) + 1
      this.#exclusionCounts.set(e.rule, ord)
      this.#excluded.push([e.rule, ord, e.id, e.version, e.fields, e.source])
    }
    if (this.#members.length + this.#excluded.length >= BATCH_ROWS) await this.flush()
  }

  /** Writes what is buffered, in one transaction. */
  async flush(): Promise<void> {
    const members = this.#members
    const excluded = this.#excluded
    if (members.length === 0 && excluded.length === 0) return
    this.#members = []
    this.#excluded = []
    try {
      const sqlite = this.#store.sqlite
      // Unsynced: nothing rests on these rows until the selection row turns `frozen` (a build found unfinished is
      // discarded, rows and all), and that commit is synced, which makes every earlier one durable with it: both
      // WALs are recovered as a prefix, so a lost batch only ever goes with the frozen row (see unsyncedSqliteCommit).
      // A sync per batch was a quarter of a SQLite freeze, taken on the event loop.
      if (sqlite) await unsyncedSqliteCommit(this.#db, () => this.#insertSqlite(sqlite, members, excluded))
      else
        await this.#db.transaction().execute(async (trx) => {
          // this transaction alone: the selection's frozen row and every other commit keep the server's setting
          await sql`set local synchronous_commit = off`.execute(trx)
          if (members.length > 0) await this.#insertMembers(trx, members)
          if (excluded.length > 0) await this.#insertExclusions(trx, excluded)
        })
    } catch (error) {
      if (isUniqueViolation(error))
        throw new WarrantError('conflict', 'the inventory returned the same record id twice (from two sources); a change by id could not tell them apart, so no selection was made', {
          reason: 'duplicate_id',
        })
      // the SQLite rows went through the raw handle, past the store's own translation: judged here, once per batch
      throw this.#store.refusalOf(error)
    }
  }

  /** Puts rows in their final order if the walk did not deliver them in it, and returns the digest. */
  async finish(): Promise<string> {
    await this.flush()
    if (!this.#exclusionsSorted) await renumber(this.#db, this.#store.dialect, this.#selectionId, 'selection_exclusions')
    if (this.#membersSorted) return this.#digest.finish()
    await renumber(this.#db, this.#store.dialect, this.#selectionId, 'selection_members')
    return recomputeDigest(this.#db, this.#selectionId)
  }

  /**
   * The members' ids drawn alike (`walkLookalikes`), for the selection row; call after `finish`. The first pass was
   * made as the members went by; the second, over the stored ids in their final order, only when two skeleton hashes
   * met (ids drawn alike, or a rare collision): a selection of plain distinct ids is read back not at all.
   */
  async lookalikes(): Promise<StoredLookalikes> {
    return groupsWhereMet(this.#skeletons.met(), (after, limit) => memberIdsOn(this.#db, this.#selectionId, after, limit))
  }

  /** Counts per value of each group-by field over the members written; call after `finish`. */
  async groupCounts(): Promise<GroupCount[]> {
    const fromStore = new Map((await groupCounts(this.#store, this.#selectionId, this.#groups.overflowed, this.#count)).map((g) => [g.field, g]))
    return this.#groups.fields.map((field) => this.#groups.countsOf(field, this.#count) ?? fromStore.get(field)!)
  }

  /** Runs inside the kysely transaction: it holds the connection these statements run on, and has begun. */
  async #insertSqlite(sqlite: SqliteDatabase, members: readonly MemberTuple[], excluded: readonly ExclusionTuple[]): Promise<void> {
    const inserts = (this.#sqliteInserts ??= {
      members: sqlite.prepare('insert into selection_members (selection_id, ord, record_id, version, fields, source) values (?, ?, ?, ?, ?, ?)'),
      exclusions: sqlite.prepare('insert into selection_exclusions (selection_id, rule, ord, record_id, version, fields, source) values (?, ?, ?, ?, ?, ?, ?)'),
    })
    const id = this.#selectionId
    await inSlices(members, SLICE_MS, (m) => inserts.members.run(id, m[0], m[1], m[2], JSON.stringify(m[3]), m[4]))
    await inSlices(excluded, SLICE_MS, (e) => inserts.exclusions.run(id, e[0], e[1], e[2], e[3], JSON.stringify(e[4]), e[5]))
  }

  /** PostgreSQL: the batch as two JSON documents (`splitFields`), one statement. */
  async #insertMembers(trx: Transaction<Database>, rows: readonly MemberTuple[]): Promise<void> {
    const { keys, fields } = splitFields(rows, 3)
    await sql`insert into selection_members (selection_id, ord, record_id, version, fields, source)
      select ${this.#selectionId}, (k->>0)::bigint, k->>1, k->>2, f::text, k->>3
      from rows from (json_array_elements(${keys}::json), json_array_elements(${fields}::json)) as t(k, f)`.execute(trx)
  }

  async #insertExclusions(trx: Transaction<Database>, rows: readonly ExclusionTuple[]): Promise<void> {
    const { keys, fields } = splitFields(rows, 4)
    await sql`insert into selection_exclusions (selection_id, rule, ord, record_id, version, fields, source)
      select ${this.#selectionId}, k->>0, (k->>1)::bigint, k->>2, k->>3, f::text, k->>4
      from rows from (json_array_elements(${keys}::json), json_array_elements(${fields}::json)) as t(k, f)`.execute(trx)
  }
}

/**
 * A batch as two JSON documents: the rows without their fields, and the rows' fields, element by element. The
 * fields go in as JSON values, not as strings of the first document: JSON.stringify once per batch instead of
 * once per row and again over the whole batch, which escaped every quote twice (and PostgreSQL undid it). The
 * text stored is the same: `json_array_elements` gives each element back as its exact text, checked, decoding
 * nothing (a \u0000 escape stays as JSON.stringify wrote it, as it did inside a string).
 */
function splitFields(rows: readonly (readonly unknown[])[], at: number): { keys: string; fields: string } {
  const keys: unknown[][] = new Array(rows.length)
  const fields: unknown[] = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    const key: unknown[] = new Array(row.length - 1)
    for (let j = 0, k = 0; j < row.length; j++) {
      if (j === at) fields[i] = row[j]
      else key[k++] = row[j]
    }
    keys[i] = key
  }
  return { keys: JSON.stringify(keys), fields: JSON.stringify(fields) }
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}
