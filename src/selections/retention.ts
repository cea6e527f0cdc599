import { setImmediate as nextTurn } from 'node:timers/promises'
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely'
import { storeNowColumn, type Database } from '../store/index.js'
import { PRUNING_KEY, PruneClaims } from './retention-claims.js'

/** Rows deleted by one statement: a sweep of a million members is many short statements, the loop served between them. */
export const PRUNE_BATCH_ROWS = 5_000
/** Selections named one by one in a sweep's answer (and its audit row); the totals always count every one. */
export const PRUNE_LISTED_MAX = 1_000

export interface PruneOptions {
  /** members of selections that expired at least this long ago (ms) are pruned */
  readonly olderThanMs: number
  /** list what would be pruned, change nothing */
  readonly dryRun: boolean
  /** this process's now; the store's own on PostgreSQL (see store-clock.ts) */
  readonly nowIso: () => string
  readonly batchRows?: number
  /** a stop asked for (the gateway closing): no further selection is started, the one being deleted stops between
   * statements, its journal entry left for the next sweep to finish; the report says what was done */
  readonly signal?: AbortSignal
}

export interface PrunedSelection {
  readonly selection_id: string
  readonly expires_at: string
  /** member rows deleted (in a dry run: the selection's count, the rows it would delete) */
  readonly members: number
  /** excluded-record rows deleted (a dry run: the excluded records its header counts) */
  readonly excluded: number
}

export interface PruneReport {
  readonly dry_run: boolean
  /** the store's now the age was measured from, and the expiry a selection had to be at or before */
  readonly now: string
  readonly expired_before: string
  readonly selections: number
  readonly members: number
  readonly excluded: number
  /** at most PRUNE_LISTED_MAX of them; `listed_complete` false when more were pruned than listed */
  readonly pruned: readonly PrunedSelection[]
  readonly listed_complete: boolean
  /** selections an earlier, interrupted sweep marked and this one finished: the rows it deleted of each */
  readonly finished: readonly PrunedSelection[]
  /** stopped by `signal` before all that was prunable was pruned */
  readonly stopped: boolean
  /** selections expired at or before `expired_before`, members not pruned, that a plan stands on: evidence, kept */
  readonly kept_evidence: number
}

/** Set once the selections an earlier release marked without a journal entry were looked for (once per store). */
const UNJOURNALED_CHECKED_KEY = 'retention_unjournaled_checked'

/**
 * Whether a selection's members are evidence, kept forever: some plan stands on it, whatever its state. A plan approved,
 * committed or run was reviewed and executed against exactly those members; a rejected one was reviewed too (the
 * rejection is a decision over them); and every plan, pending or expired included, renders them in its view, its
 * changes page and the review queue, which would otherwise turn into refusals. What retention prunes is the bulk that
 * no plan ever used: the selections agents froze and never proposed a change on.
 */
function isEvidence(eb: ExpressionBuilder<Database, 'selections'>): Expression<SqlBool> {
  return eb.exists(eb.selectFrom('plans as p').select(sql`1`.as('one')).whereRef('p.selection_id', '=', 'selections.id'))
}

/**
 * The retention sweep: deletes the member and excluded-record rows of selections that expired at least `olderThanMs`
 * ago and that no plan stands on (see `isEvidence`). Each selection is first marked pruned (its header kept, with when), then
 * its rows deleted in bounded batches with a turn of the event loop between: a reader sees the mark before any row is
 * gone, so no read of a half-deleted selection answers as if it were whole. A sweep that stopped part way (a crash)
 * leaves marked selections with rows, each journaled (`PRUNING_KEY`): the next one finishes them first.
 */
export async function pruneExpiredMembers(db: Kysely<Database>, options: PruneOptions): Promise<PruneReport> {
  const batch = options.batchRows ?? PRUNE_BATCH_ROWS
  const { now } = (await sql<{ now: string }>`select ${storeNowColumn(db, options.nowIso())} as now`.execute(db)).rows[0]!
  const expiredBefore = new Date(Date.parse(now) - options.olderThanMs).toISOString()
  const prunable = db
    .selectFrom('selections')
    .select(['id', 'expires_at', 'count', 'exclusions'])
    .where('members_pruned_at', 'is', null)
    .where('state', 'in', ['frozen', 'expired'])
    .where('expires_at', '<=', expiredBefore)
    .where((eb) => eb.not(isEvidence(eb)))
  const candidates = await prunable.orderBy('expires_at').orderBy('id').execute()
  const keptEvidence = await countKeptEvidence(db, expiredBefore)
  const claims = new PruneClaims(db, now)
  try {
    return await prune(db, options, { now, expiredBefore, candidates, keptEvidence, batch, claims })
  } finally {
    // whatever this sweep still holds (stopped, or failed part way) the next sweep takes at once; a release that fails
    // (the store gone) leaves claims that go stale, and never hides the failure that brought it here
    await claims.releaseAll().catch(() => undefined)
  }
}

async function prune(
  db: Kysely<Database>,
  options: PruneOptions,
  sweep: { now: string; expiredBefore: string; candidates: readonly Candidate[]; keptEvidence: number; batch: number; claims: PruneClaims },
): Promise<PruneReport> {
  const { now, expiredBefore, candidates, keptEvidence, batch, claims } = sweep
  const pruned: PrunedSelection[] = []
  let members = 0
  let excluded = 0
  let selections = 0
  const finished: PrunedSelection[] = options.dryRun ? [] : await finishUnfinished(db, batch, options.signal, claims)
  let stopped = options.signal?.aborted === true
  for (const row of candidates) {
    stopped ||= options.signal?.aborted === true
    if (stopped) break
    let done: PrunedSelection
    if (options.dryRun) done = { selection_id: row.id, expires_at: row.expires_at, members: Number(row.count), excluded: excludedCount(row.exclusions) }
    else {
      // journaled before it is marked: a sweep cut anywhere after the mark leaves the entry the next one finishes
      await claims.journal(row.id)
      // marked only if still prunable now (the same rule, in the same statement): a plan proposed meanwhile keeps it
      // (none can be: an expired selection is refused a plan, but the rule is kept where the row is written)
      const marked = await db
        .updateTable('selections')
        .set({ members_pruned_at: now })
        .where('id', '=', row.id)
        .where('members_pruned_at', 'is', null)
        .where((eb) => eb.not(isEvidence(eb)))
        .executeTakeFirst()
      if (Number(marked.numUpdatedRows) === 0) {
        // evidence now: no entry is left. Marked by another sweep since this one listed it: that sweep is deleting its rows
        // (it marked after this sweep journaled, so it is running, and takes the entry as its own next). This sweep lets go
        // of the entry it journaled: it used to delete rows too, alongside the marker, so both listed the selection, and a
        // batch of the marker's that found its rows just deleted by this one ended that selection with rows left. Had the
        // marker died before taking the entry, the released entry is finished at once by the next sweep; had it finished
        // before this sweep journaled, nothing is left and the entry goes.
        if (!(await isMarked(db, row.id))) await claims.drop(row.id)
        else if ((await hasRows(db, 'selection_members', row.id)) || (await hasRows(db, 'selection_exclusions', row.id))) await claims.release(row.id)
        else await claims.done(row.id)
        continue
      }
      // marked by this sweep: its entry is this sweep's, whichever journaled it first, so no other sweep finishes it meanwhile
      await claims.own(row.id)
      const rows = await deleteRowsOf(db, row.id, batch, options.signal, claims)
      stopped = rows.stopped
      done = { selection_id: row.id, expires_at: row.expires_at, members: rows.members, excluded: rows.excluded }
    }
    selections += 1
    members += done.members
    excluded += done.excluded
    if (pruned.length < PRUNE_LISTED_MAX) pruned.push(done)
  }
  return { dry_run: options.dryRun, now, expired_before: expiredBefore, selections, members, excluded, pruned, listed_complete: pruned.length === selections, finished, stopped, kept_evidence: keptEvidence }
}

/** The expired selections old enough to prune that a plan stands on: what a sweep keeps as evidence (see `isEvidence`). */
async function countKeptEvidence(db: Kysely<Database>, expiredBefore: string): Promise<number> {
  const row = await db
    .selectFrom('selections')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('members_pruned_at', 'is', null)
    .where('state', 'in', ['frozen', 'expired'])
    .where('expires_at', '<=', expiredBefore)
    .where((eb) => isEvidence(eb))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

type Candidate = { readonly id: string; readonly expires_at: string; readonly count: number | string | bigint; readonly exclusions: string }

function excludedCount(exclusions: string): number {
  try {
    return (JSON.parse(exclusions) as { count?: number }[]).reduce((sum, e) => sum + Number(e.count ?? 0), 0)
  } catch {
    return 0
  }
}

async function hasRows(db: Kysely<Database>, table: 'selection_members' | 'selection_exclusions', selectionId: string): Promise<boolean> {
  return (await db.selectFrom(table).select('ord').where('selection_id', '=', selectionId).limit(1).executeTakeFirst()) !== undefined
}

async function isMarked(db: Kysely<Database>, selectionId: string): Promise<boolean> {
  const row = await db.selectFrom('selections').select('members_pruned_at').where('id', '=', selectionId).executeTakeFirst()
  return row?.members_pruned_at != null
}

/**
 * Selections marked pruned by a sweep that stopped before deleting all their rows: their rows are deleted now. They are
 * found in the journal (a few `kv` rows, however many selections were ever pruned); an entry whose selection was never
 * marked (cut between the two writes) is dropped, the selection left to the candidates. Once per store, selections
 * marked by the release before the journal (0021 without it) are looked for by a scan, journaled, and finished too.
 */
async function finishUnfinished(db: Kysely<Database>, batch: number, signal: AbortSignal | undefined, claims: PruneClaims): Promise<PrunedSelection[]> {
  await journalUnjournaled(db)
  const entries = await db.selectFrom('kv').select(['key', 'value']).where('key', 'like', `${PRUNING_KEY}%`).orderBy('key').execute()
  const finished: PrunedSelection[] = []
  for (const { key, value } of entries) {
    if (signal?.aborted) break
    // another running sweep's (it is deleting those rows now, and lists them), or taken by another sweep first: left to it
    if (!(await claims.take(key, value))) continue
    const id = key.slice(PRUNING_KEY.length)
    const header = await db.selectFrom('selections').select(['expires_at', 'members_pruned_at']).where('id', '=', id).executeTakeFirst()
    if (header?.members_pruned_at != null) {
      const rows = await deleteRowsOf(db, id, batch, signal, claims)
      if (rows.members + rows.excluded > 0) finished.push({ selection_id: id, expires_at: header.expires_at, members: rows.members, excluded: rows.excluded })
      if (rows.stopped) break
    }
    await claims.done(id)
  }
  return finished
}

async function journalUnjournaled(db: Kysely<Database>): Promise<void> {
  if (await db.selectFrom('kv').select('key').where('key', '=', UNJOURNALED_CHECKED_KEY).executeTakeFirst()) return
  const left = await db
    .selectFrom('selections')
    .select(['id', 'members_pruned_at'])
    .where('members_pruned_at', 'is not', null)
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('selection_members as m').select(sql`1`.as('one')).whereRef('m.selection_id', '=', 'selections.id')),
        eb.exists(eb.selectFrom('selection_exclusions as x').select(sql`1`.as('one')).whereRef('x.selection_id', '=', 'selections.id')),
      ]),
    )
    .execute()
  for (const { id, members_pruned_at } of left)
    await db.insertInto('kv').values({ key: PRUNING_KEY + id, value: String(members_pruned_at) }).onConflict((oc) => oc.column('key').doNothing()).execute()
  await db.insertInto('kv').values({ key: UNJOURNALED_CHECKED_KEY, value: new Date().toISOString() }).onConflict((oc) => oc.column('key').doNothing()).execute()
}

/**
 * Deletes one selection's member and exclusion rows, at most about `batch` a statement, yielding the loop between; then
 * its journal entry. Stopped (`signal`) between statements, the entry stays: the next sweep finishes it.
 */
async function deleteRowsOf(
  db: Kysely<Database>,
  selectionId: string,
  batch: number,
  signal: AbortSignal | undefined,
  claims: PruneClaims,
): Promise<{ members: number; excluded: number; stopped: boolean }> {
  const counts = { members: 0, excluded: 0, stopped: false }
  for (const [table, key] of [['selection_members', 'members'], ['selection_exclusions', 'excluded']] as const) {
    for (;;) {
      // the lowest `batch` places, found by the primary key: DELETE … LIMIT is on neither store
      const result = await db
        .deleteFrom(table)
        .where('selection_id', '=', selectionId)
        .where('ord', 'in', (eb) => eb.selectFrom(table).select('ord').where('selection_id', '=', selectionId).orderBy('ord').limit(batch))
        .executeTakeFirst()
      const deleted = Number(result.numDeletedRows)
      counts[key] += deleted
      await nextTurn()
      // none deleted is the end only if none is left: on PostgreSQL a batch whose rows another transaction deleted first
      // (a sweep whose claim went stale and was taken, a person's DELETE) deletes none while later rows remain
      if (deleted === 0 && !(await hasRows(db, table, selectionId))) break
      if (signal?.aborted) return { ...counts, stopped: true }
      // this sweep stalled past its claim and another took the rest: what it deleted is counted, the rest is the other's
      if (!(await claims.renew(selectionId))) return counts
    }
  }
  await claims.done(selectionId)
  return counts
}
