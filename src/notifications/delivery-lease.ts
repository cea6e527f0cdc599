import type { ExpressionBuilder, Kysely } from 'kysely'
import { performance } from 'node:perf_hooks'
import { leaseEnd, leaseNow, storeNowColumn, type Database, type IsoTimestamp, type WebhookDeliveryRow } from '../store/index.js'

/**
 * Which notifier sends a pending webhook delivery, and when. Two columns, two meanings (migration 0012):
 *
 * - `next_attempt_at`: when the next attempt is due;
 * - `lease_until` + `lease_owner`: the claim of the notifier sending it or waiting to retry it. A pending delivery is
 *   taken by another notifier only when it is due and unclaimed (released by a clean stop, or its lease ended: the
 *   holder died). Every write the holder makes after a wait asks that the claim is still its own.
 *
 * Both are the database's time on PostgreSQL (several instances, several clocks), the process's on SQLite (see
 * store/store-clock.ts). One column held both, on each process's clock: an instance whose clock ran ahead took a
 * delivery another was sending (the receiver had it twice at once) and sent a released retry before its backoff was
 * over; one behind wrote leases already ended for the others, and waited its skew before sending a due retry.
 */
/** A time as written: the ISO text, or the database's clock read in the statement itself. */
type Stamp = ReturnType<typeof leaseNow>

/**
 * The store's time as a statement about the delivery read it, and when on this process's monotonic clock: what an
 * attempt is signed with (`X-Warrant-Timestamp`) is that time plus the time since. A receiver refuses a stamp more
 * than its tolerance from its own clock, so every instance must stamp on one clock: stamped on its own, each delivery
 * an instance 10 minutes slow sent was refused.
 */
export interface StoreReading {
  readonly at: IsoTimestamp
  readonly monotonicMs: number
}

export function storeReading(at: IsoTimestamp): StoreReading {
  return { at, monotonicMs: performance.now() }
}

/** The store's time now, in whole seconds since the epoch, as `reading` and the monotonic clock since say. */
export function storeSecondsNow(reading: StoreReading): number {
  return Math.floor((Date.parse(reading.at) + (performance.now() - reading.monotonicMs)) / 1000)
}

export interface DeliveryLeases {
  /** The columns of a delivery this notifier records now and sends at once. */
  taken(now: IsoTimestamp): { next_attempt_at: Stamp; lease_until: Stamp; lease_owner: string }
  /** Pending deliveries that are due and unclaimed, oldest first. */
  due(now: IsoTimestamp, limit: number): Promise<WebhookDeliveryRow[]>
  /** Takes a due, unclaimed delivery, reading the store's time; null when another notifier took it first (or it was settled). */
  claim(id: string, now: IsoTimestamp): Promise<StoreReading | null>
  /** Extends this notifier's lease before an attempt, reading the store's time; null when it is no longer this notifier's: send nothing. */
  renew(id: string, now: IsoTimestamp): Promise<StoreReading | null>
  /**
   * After a failed attempt: `retryInMs` until the next one (this notifier keeps the lease), or null for none (the
   * delivery is failed). False when the lease was no longer this notifier's: nothing is written.
   */
  failed(id: string, now: IsoTimestamp, retryInMs: number | null, attempt: { attempts: number; last_status: number | null; last_error: string | null }): Promise<boolean>
  /** Gives the lease up (this process stops); the due time stays, so the next notifier sends it then. */
  release(id: string, now: IsoTimestamp, lastError?: string): Promise<void>
}

export function deliveryLeases(db: Kysely<Database>, owner: string, leaseMs: number): DeliveryLeases {
  const unclaimedAndDue = (now: IsoTimestamp) => (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
    eb.and([
      eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', leaseNow(db, now))]),
      eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', leaseNow(db, now))]),
    ])
  const ours = (id: string) => db.updateTable('webhook_deliveries').where('id', '=', id).where('state', '=', 'pending').where('lease_owner', '=', owner)
  const one = (result: { numUpdatedRows: bigint }) => Number(result.numUpdatedRows) === 1
  const read = (row: { store_now: IsoTimestamp } | undefined) => (row ? storeReading(row.store_now) : null)

  return {
    taken: (now) => ({ next_attempt_at: leaseNow(db, now), lease_until: leaseEnd(db, now, leaseMs), lease_owner: owner }),

    due: (now, limit) => db.selectFrom('webhook_deliveries').selectAll().where('state', '=', 'pending').where(unclaimedAndDue(now)).orderBy('created_at').limit(limit).execute(),

    // The condition again in the UPDATE itself: of two notifiers that read the row as free, one takes it (PostgreSQL
    // re-reads the row the first one updated; SQLite runs one writer at a time).
    claim: async (id, now) =>
      read(
        await db
          .updateTable('webhook_deliveries')
          .set({ lease_owner: owner, lease_until: leaseEnd(db, now, leaseMs), updated_at: now })
          .where('id', '=', id)
          .where('state', '=', 'pending')
          .where(unclaimedAndDue(now))
          .returning(storeNowColumn(db, now).as('store_now'))
          .executeTakeFirst(),
      ),

    renew: async (id, now) => read(await ours(id).set({ lease_until: leaseEnd(db, now, leaseMs) }).returning(storeNowColumn(db, now).as('store_now')).executeTakeFirst()),

    failed: async (id, now, retryInMs, attempt) =>
      one(
        await ours(id)
          .set({
            ...attempt,
            state: retryInMs === null ? 'failed' : 'pending',
            updated_at: now,
            next_attempt_at: retryInMs === null ? null : leaseEnd(db, now, retryInMs),
            lease_until: retryInMs === null ? null : leaseEnd(db, now, leaseMs),
            lease_owner: retryInMs === null ? null : owner,
          })
          .executeTakeFirst(),
      ),

    release: async (id, now, lastError) => {
      await ours(id)
        .set({ lease_until: null, lease_owner: null, updated_at: now, ...(lastError ? { last_error: lastError } : {}) })
        .execute()
    },
  }
}
