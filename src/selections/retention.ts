import { setImmediate as nextTurn } from 'node:timers/promises'
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely'
import { storeNowColumn, type Database } from '../store/index.js'

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
}

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
 * leaves marked selections with rows: the next one finishes them first.
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
  const pruned: PrunedSelection[] = []
  let members = 0
  let excluded = 0
  let selections = 0
  if (!options.dryRun) await finishUnfinished(db, batch)
  for (const row of candidates) {
    let done: PrunedSelection
    if (options.dryRun) done = { selection_id: row.id, expires_at: row.expires_at, members: Number(row.count), excluded: excludedCount(row.exclusions) }
    else {
      // marked only if still prunable now (the same rule, in the same statement): a plan proposed meanwhile keeps it
      // (none can be: an expired selection is refused a plan, but the rule is kept where the row is written)
      const marked = await db
        .updateTable('selections')
        .set({ members_pruned_at: now })
        .where('id', '=', row.id)
        .where('members_pruned_at', 'is', null)
        .where((eb) => eb.not(isEvidence(eb)))
        .executeTakeFirst()
      if (Number(marked.numUpdatedRows) === 0) continue
      const rows = await deleteRowsOf(db, row.id, batch)
      done = { selection_id: row.id, expires_at: row.expires_at, ...rows }
    }
    selections += 1
    members += done.members
    excluded += done.excluded
    if (pruned.length < PRUNE_LISTED_MAX) pruned.push(done)
  }
  return { dry_run: options.dryRun, now, expired_before: expiredBefore, selections, members, excluded, pruned, listed_complete: pruned.length === selections }
}

function excludedCount(exclusions: string): number {
  try {
    return (JSON.parse(exclusions) as { count?: number }[]).reduce((sum, e) => sum + Number(e.count ?? 0), 0)
  } catch {
    return 0
  }
}

/** Selections marked pruned by a sweep that stopped before deleting all their rows: their rows are deleted now. */
async function finishUnfinished(db: Kysely<Database>, batch: number): Promise<void> {
  const left = await db
    .selectFrom('selections')
    .select('id')
    .where('members_pruned_at', 'is not', null)
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('selection_members as m').select(sql`1`.as('one')).whereRef('m.selection_id', '=', 'selections.id')),
        eb.exists(eb.selectFrom('selection_exclusions as x').select(sql`1`.as('one')).whereRef('x.selection_id', '=', 'selections.id')),
      ]),
    )
    .execute()
  for (const { id } of left) await deleteRowsOf(db, id, batch)
}

/** Deletes one selection's member and exclusion rows, at most about `batch` a statement, yielding the loop between. */
async function deleteRowsOf(db: Kysely<Database>, selectionId: string, batch: number): Promise<{ members: number; excluded: number }> {
  const counts = { members: 0, excluded: 0 }
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
      if (deleted === 0) break
    }
  }
  return counts
}
