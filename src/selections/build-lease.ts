import { WarrantError } from '../contract/index.js'
import { deadLocalOwners, leaseEnd, leaseNow, liveLocalOwners } from '../store/index.js'
import type { SelectionContext } from './context.js'

/**
 * A selection being built belongs to one process (`builder`), which renews `lease_until` while it walks. A process
 * killed mid-walk (SIGKILL, a crash, a lost host) cannot remove what it built, and nothing would ever finish it: any
 * later process that meets such a row (at open, on its sweep, or looking the id up) marks it `failed` with the reason,
 * and removes its members and exclusions. It is never served, and never usable by a plan, approval or commit.
 *
 * A builder is known gone when its lease has ended, at once when it was a process of this machine that no longer
 * runs (see `deadLocalOwners`), and in any case once the selection would have expired: a selection past its expiry
 * can never be used, and rows written before builders were recorded have only that.
 *
 * A lapsed lease alone does not end a build whose builder is proven a live process of this machine (`liveLocalOwners`:
 * its pid runs and started when its name says, so not a reused pid): its lease lapsed because its event loop was
 * blocked (a long SQLite statement) or its timer ran late, and it is still walking. Declaring it dead removed the
 * members under a live walk and recorded a crash that never happened. Its selection's expiry still ends it.
 *
 * The lease is written and judged on the database's clock on PostgreSQL (see store/store-clock.ts): a builder on a
 * machine whose clock ran behind renewed it into the others' past, and they removed its live walk. The selection's
 * expiry stays on the process's clock, like every other expiry.
 */

/** The builder is alive until then; renewed every third of it. */
export const DEFAULT_BUILD_LEASE_MS = 30_000

/** Why a building row is abandoned, in words, or null while its builder may still finish it. */
function abandonment(
  row: { builder: string | null; lease_until: string | null; lease_ended: unknown; expires_at: string },
  now: string,
  dead: ReadonlySet<string>,
  live: ReadonlySet<string>,
): string | null {
  if (row.builder !== null && dead.has(row.builder)) return `its builder, process ${row.builder}, no longer runs (killed or crashed mid-walk)`
  // lease_ended: the store's answer (a boolean on PostgreSQL, 0 or 1 on SQLite), on the lease's clock
  if (row.lease_until !== null && Boolean(row.lease_ended) && !(row.builder !== null && live.has(row.builder)))
    return `its builder${row.builder === null ? '' : ` (${row.builder})`} stopped renewing its lease, which ended at ${row.lease_until} (killed, crashed or cut off mid-walk)`
  if (row.expires_at <= now) return `it was still being built when it would have expired (${row.expires_at}); its builder never finished it`
  return null
}

/**
 * Marks every abandoned building selection `failed` with its reason and removes its members and exclusions
 * (`onlyId`: just that one). Returns the ids it marked. Safe from any number of processes at once: each row is
 * marked by one conditional update, and only the process that marked it removes its members.
 */
export async function reapAbandoned(ctx: SelectionContext, onlyId?: string): Promise<string[]> {
  const now = ctx.nowIso()
  let query = ctx.db
    .selectFrom('selections')
    .select((eb) => ['id', 'builder', 'lease_until', 'expires_at', eb('lease_until', '<=', leaseNow(ctx.db, now)).as('lease_ended')])
    .where('state', '=', 'building')
  if (onlyId !== undefined) query = query.where('id', '=', onlyId)
  const rows = await query.execute()
  if (rows.length === 0) return []
  const builders = [...new Set(rows.map((r) => r.builder).filter((b): b is string => b !== null))]
  const dead = new Set(deadLocalOwners(builders))
  const live = new Set(liveLocalOwners(builders))
  const reaped: string[] = []
  for (const row of rows) {
    // this process's own build, given up on, that the store would not let it remove then (given-up-builds.ts)
    const reason = (row.builder === ctx.owner ? ctx.givenUp.get(row.id) : undefined) ?? abandonment(row, now, dead, live)
    if (reason === null) continue
    // One transaction: a row marked failed whose members the store then refused to remove kept them for good.
    const marked = await ctx.db.transaction().execute(async (trx) => {
      // Conditional on the row as read: a builder that renewed its lease meanwhile keeps its selection.
      const update = await trx
        .updateTable('selections')
        // its idempotency key is released: the request failed, so a retry with that key builds anew
        .set({ state: 'failed', failure: `never finished: ${reason}; its members were removed`, lease_until: null, idempotency_key: null })
        .where('id', '=', row.id)
        .where('state', '=', 'building')
        .where((eb) => (row.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', row.lease_until)))
        .executeTakeFirst()
      if (Number(update.numUpdatedRows) !== 1) return false
      await trx.deleteFrom('selection_members').where('selection_id', '=', row.id).execute()
      await trx.deleteFrom('selection_exclusions').where('selection_id', '=', row.id).execute()
      return true
    })
    if (!marked) continue
    reaped.push(row.id)
  }
  return reaped
}

/** The refusal for a selection that will never be frozen: what happened, and what to do instead. */
export function failedSelection(id: string, failure: string | null): WarrantError {
  const why = failure ?? 'never finished: its build failed'
  return new WarrantError('conflict', `selection ${id} was ${why}. It can never be reviewed, planned or committed: create a new selection`, {
    selection_id: id,
    state: 'failed',
    reason: why,
  })
}

/** The refusal for a selection another process is still building (its id is not served until it is frozen). */
export function stillBuilding(id: string, builder: string | null): WarrantError {
  return new WarrantError('conflict', `selection ${id} is still being built${builder === null ? '' : ` by ${builder}`}; it is served once frozen`, {
    selection_id: id,
    state: 'building',
  })
}

/**
 * Renews this process's lease on the selection it builds, every third of the lease. `lost` is aborted when the store
 * says the selection is no longer ours to build (another process found the lease ended and marked it failed): the walk
 * stops, since what it froze was removed.
 */
export function keepBuilding(ctx: SelectionContext, id: string): { readonly lost: AbortSignal; stop(): void } {
  const lost = new AbortController()
  const timer = setInterval(
    () => {
      const at = ctx.clock().getTime()
      ctx.db
        .updateTable('selections')
        .set({ lease_until: leaseEnd(ctx.db, new Date(at).toISOString(), ctx.buildLeaseMs) })
        .where('id', '=', id)
        .where('state', '=', 'building')
        .where('builder', '=', ctx.owner)
        .executeTakeFirst()
        .then((result) => {
          if (Number(result.numUpdatedRows) !== 1 && !lost.signal.aborted) lost.abort(lostBuild(id))
        })
        // a renewal that fails is retried at the next tick; the freeze itself checks the row is still ours
        .catch(() => undefined)
    },
    Math.max(50, Math.floor(ctx.buildLeaseMs / 3)),
  )
  timer.unref?.()
  return { lost: lost.signal, stop: () => clearInterval(timer) }
}

/** This process's build was declared abandoned by another (its lease had ended): nothing of it is served. */
export function lostBuild(id: string): WarrantError {
  return new WarrantError(
    'conflict',
    `selection ${id} was declared abandoned while it was being built (its lease ended before this process renewed it: the process or its store stalled); nothing of it is served: create the selection again`,
    { selection_id: id, state: 'failed' },
  )
}
