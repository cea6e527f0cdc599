import { type Actor, WarrantError } from '../contract/index.js'
import type { OperationService, OperationView } from '../operations/index.js'
import type { PlanService, PlanView } from '../plans/index.js'
import { storeNowColumn, type Store } from '../store/index.js'

export interface ReviewQueue {
  /**
   * Plans waiting for a reviewer's decision, newest first: every plan whose effective state (the plan
   * service's, which accounts for lapsed approvals and expired selections) is `pending`, within the actor's scope.
   */
  awaitingDecision(
    actor: Actor,
    options?: { readonly limit?: number; readonly older?: QueuePosition },
  ): Promise<{ readonly plans: readonly PlanView[]; readonly more: boolean; readonly next: QueuePosition | null }>
  /** Recent plans that were decided or committed, newest first, within the actor's scope. */
  recentlyDecided(actor: Actor, options?: { readonly limit?: number }): Promise<readonly PlanView[]>
  /** The operations (commits) of one plan, oldest first. */
  operationsOf(actor: Actor, planId: string): Promise<readonly OperationView[]>
}

export interface ReviewQueueOptions {
  readonly store: Store
  readonly plans: PlanService
  readonly operations: OperationService
}

/**
 * Where a listing of the queue stopped: the stored row of the last plan it listed (or looked at), newest first. A
 * listing `older` than it goes on from the next row, so the plans past the first page can be listed too.
 */
export interface QueuePosition {
  readonly created_at: string
  readonly id: string
}

/** Stored rows looked at per request, at most: a queue longer than this says so (`more`). */
const SCAN_MAX = 1000
const BATCH = 100

/**
 * What waits for a reviewer, and what a plan led to. The store is asked only which ids to look at; every
 * state shown comes from the plan and operation services, so the queue can never disagree with the rules.
 *
 * @example const { plans } = await createReviewQueue({ store, plans, operations }).awaitingDecision(reviewer)
 */
export function createReviewQueue(options: ReviewQueueOptions): ReviewQueue {
  const { store, plans, operations } = options
  const db = store.db

  /** Plan views for stored rows in `states`, newest first, keeping those `keep` accepts and the actor may see. */
  async function scan(actor: Actor, states: readonly ('pending' | 'approved' | 'rejected' | 'committed')[], limit: number, keep: (view: PlanView) => boolean, liveOnly: boolean, older: QueuePosition | null = null) {
    const found: PlanView[] = []
    let scanned = 0
    let after: QueuePosition | null = older
    // the last row listed or passed over: a listing cut short goes on after it
    let seen: QueuePosition | null = older
    while (scanned < SCAN_MAX) {
      let q = db.selectFrom('plans').select(['id', 'created_at']).where('state', 'in', [...states])
      // the store's now (the database's on PostgreSQL), as each plan's view judges it: on this instance's own clock,
      // running fast, a plan open by the store's time was left out of the queue while its page said pending
      if (liveOnly) q = q.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', storeNowColumn(db, store.now()))]))
      if (after) {
        const a = after
        q = q.where((eb) => eb.or([eb('created_at', '<', a.created_at), eb.and([eb('created_at', '=', a.created_at), eb('id', '<', a.id)])]))
      }
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(BATCH).execute()
      for (const row of rows) {
        scanned += 1
        let view: PlanView
        try {
          view = await plans.view(actor, row.id)
        } catch (error) {
          if (error instanceof WarrantError && (error.code === 'forbidden' || error.code === 'not_found')) {
            seen = row
            continue
          }
          throw error
        }
        if (found.length === limit && keep(view)) return { plans: found, more: true, next: seen }
        if (keep(view)) found.push(view)
        seen = row
      }
      if (rows.length < BATCH) return { plans: found, more: false, next: null }
      const last = rows[rows.length - 1]!
      after = { created_at: last.created_at, id: last.id }
    }
    return { plans: found, more: true, next: seen }
  }

  return {
    async awaitingDecision(actor, opts = {}) {
      // A stored `approved` plan whose approval lapsed waits for a decision again: the service says so.
      return scan(actor, ['pending', 'approved'], clamp(opts.limit, 50, 200), (v) => v.state === 'pending', true, opts.older ?? null)
    },

    async recentlyDecided(actor, opts = {}) {
      const { plans: found } = await scan(actor, ['approved', 'rejected', 'committed'], clamp(opts.limit, 20, 100), (v) => v.state !== 'pending', false)
      return found
    },

    async operationsOf(actor, planId) {
      await plans.load(actor, planId) // not_found / forbidden, as for the plan itself
      const rows = await db.selectFrom('operations').select('id').where('plan_id', '=', planId).orderBy('created_at').orderBy('id').execute()
      const out: OperationView[] = []
      for (const row of rows) out.push(await operations.get(actor, row.id))
      return out
    },
  }
}

function clamp(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback
  return Math.min(max, Math.max(1, Math.floor(value)))
}
