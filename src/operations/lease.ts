import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import { leaseEnd, leaseNow, type Database, type OperationState, type Store } from '../store/index.js'

/**
 * Leases decide which executor runs an operation. A lease is (lease_owner, lease_expires_at) on the operation
 * row; the holder renews it while it runs, and a live lease held by another instance is never taken.
 *
 * - PostgreSQL (several gateways on one database): the candidate rows are locked with
 *   `SELECT … FOR UPDATE SKIP LOCKED`, so two instances claiming at once each get different operations and
 *   never wait on each other, then updated in the same transaction.
 * - SQLite (one file, usually one gateway): one conditional `UPDATE … WHERE <lease free> RETURNING id` is
 *   atomic under SQLite's single-writer lock, which is what SKIP LOCKED buys on PostgreSQL.
 *
 * Lease times are the database's on PostgreSQL, the process's on SQLite (see store/store-clock.ts): instances whose
 * clocks disagree never see another's live lease as ended. `now` below is the process's clock, which the store's
 * replaces on PostgreSQL; ledger times (`updated_at`) stay the process's.
 */

type Db = Kysely<Database>

const CLAIMABLE_STATES = ['pending', 'running'] as const

export interface ClaimOptions {
  readonly owner: string
  /** ISO now, on the process's clock */
  readonly now: string
  /** how long the new lease lasts */
  readonly leaseMs: number
  /** one operation, or any claimable one (at most `limit`) */
  readonly operationId?: string
  readonly limit?: number
  /** Owners known to be gone (see `deadLocalOwners`): their leases are taken even before they expire. */
  readonly takeoverFrom?: readonly string[]
}

/** The owners, other than `owner`, holding a live lease on an unfinished operation. */
export async function otherLeaseHolders(db: Db, owner: string, now: string): Promise<string[]> {
  const rows = await db
    .selectFrom('operations')
    .select('lease_owner')
    .distinct()
    .where('state', 'in', CLAIMABLE_STATES)
    .where('lease_owner', 'is not', null)
    .where('lease_owner', '!=', owner)
    .where('lease_expires_at', '>', leaseNow(db, now))
    .execute()
  return rows.map((r) => r.lease_owner).filter((o): o is string => o !== null)
}

function leaseFree(db: Db, options: ClaimOptions) {
  return (eb: ExpressionBuilder<Database, 'operations'>) =>
    eb.or([
      eb('lease_owner', 'is', null),
      eb('lease_owner', '=', options.owner),
      eb('lease_expires_at', 'is', null),
      eb('lease_expires_at', '<=', leaseNow(db, options.now)),
      ...(options.takeoverFrom && options.takeoverFrom.length > 0 ? [eb('lease_owner', 'in', options.takeoverFrom)] : []),
    ])
}

/** The claimable operations whose lease is free (just `operationId`, where given), oldest first, at most `limit`. */
function candidates(db: Db, options: ClaimOptions) {
  let query = db.selectFrom('operations').select('id').where('state', 'in', CLAIMABLE_STATES).where(leaseFree(db, options))
  if (options.operationId !== undefined) query = query.where('id', '=', options.operationId)
  return query.orderBy('created_at').limit(options.limit ?? 100)
}

/** What a claim sets: the lease is `owner`'s for `leaseMs`, and a pending operation is running. */
function claimed(db: Db, options: ClaimOptions) {
  return { lease_owner: options.owner, lease_expires_at: leaseEnd(db, options.now, options.leaseMs), state: sql<OperationState>`case when state = 'pending' then 'running' else state end`, updated_at: options.now }
}

/** Claims unfinished operations whose lease is free, expired, or already ours; returns their ids. */
export async function claimOperations(store: Store, options: ClaimOptions): Promise<string[]> {
  return store.dialect === 'postgres' ? claimOnPostgres(store.db, options) : claimOnSqlite(store.db, options)
}

async function claimOnPostgres(db: Db, options: ClaimOptions): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await candidates(trx, options).forUpdate().skipLocked().execute()
    if (rows.length === 0) return []
    const ids = rows.map((r) => r.id)
    await trx.updateTable('operations').set(claimed(trx, options)).where('id', 'in', ids).execute()
    return ids
  })
}

async function claimOnSqlite(db: Db, options: ClaimOptions): Promise<string[]> {
  const ids = (await candidates(db, options).execute()).map((r) => r.id)
  if (ids.length === 0) return []
  // The same lease condition again, in the UPDATE itself: whatever changed since the read, only a free
  // lease is taken (the statement runs under SQLite's write lock).
  const rows = await db
    .updateTable('operations')
    .set(claimed(db, options))
    .where('id', 'in', ids)
    .where('state', 'in', CLAIMABLE_STATES)
    .where(leaseFree(db, options))
    .returning('id')
    .execute()
  return rows.map((r) => r.id)
}

/** Extends the lease by `leaseMs` from now; false when it is no longer ours (expired and taken by another instance). */
export async function renewLease(db: Db, operationId: string, owner: string, now: string, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('operations')
    .set({ lease_expires_at: leaseEnd(db, now, leaseMs), updated_at: now })
    .where('id', '=', operationId)
    .where('lease_owner', '=', owner)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Gives the lease up without finishing (the gateway is closing): another executor may claim it at once. */
export async function releaseLease(db: Db, operationId: string, owner: string, now: string): Promise<void> {
  await db
    .updateTable('operations')
    .set({ lease_owner: null, lease_expires_at: null, updated_at: now })
    .where('id', '=', operationId)
    .where('lease_owner', '=', owner)
    .execute()
}

export interface KeptLease {
  /**
   * Until when the lease is ours, as far as this process knows (ms since the epoch): a target claimed with its
   * window is started only before then (the claim checked the lease in the store; a write started later could
   * follow a takeover).
   */
  until(): number
  /**
   * Whether a target may be put in flight or its write sent now: the lease is ours with at least `LEASE_MARGIN` of its
   * length left on this process's clock. Renewed every third, a lease keeps two thirds or more while the store answers;
   * below the margin, renewals have failed for a while, and a write started then could still be under way when
   * another instance takes the operation over and declares the target `unknown`.
   */
  holds(): boolean
  /** The store said the lease is no longer ours. */
  lost(): boolean
  stop(): void
}

/** The part of a lease that must be left for a target to start (see `KeptLease.holds`). */
export const LEASE_MARGIN = 1 / 4

/**
 * Renews an operation's lease every third of its length while the executor runs. A renewal the store refuses
 * (another instance took the lease) calls `onLost` once; one that fails is retried at the next tick.
 *
 * @example
 * const lease = keepLease({ db, operationId, owner, leaseMs: 30_000, clock, heldUntil, onLost: () => abort.abort(), onError: log })
 * if (!lease.holds()) stop()
 */
export function keepLease(options: {
  readonly db: Db
  readonly operationId: string
  readonly owner: string
  readonly leaseMs: number
  readonly clock: () => Date
  /** the lease's end as claimed, on this process's clock: the claim's sending time plus the lease (ms since the epoch) */
  readonly heldUntil: number
  readonly onLost: () => void
  readonly onError: (error: unknown) => void
}): KeptLease {
  const { db, operationId, owner, leaseMs, clock } = options
  let until = options.heldUntil
  let lost = false
  const timer = setInterval(
    () => {
      const at = clock().getTime()
      renewLease(db, operationId, owner, new Date(at).toISOString(), leaseMs)
        .then((held) => {
          if (held) until = Math.max(until, at + leaseMs)
          else if (!lost) {
            lost = true
            options.onLost()
          }
        })
        .catch(options.onError)
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  )
  timer.unref?.()
  const holds = () => !lost && clock().getTime() < until - leaseMs * LEASE_MARGIN
  return { until: () => until, holds, lost: () => lost, stop: () => clearInterval(timer) }
}
