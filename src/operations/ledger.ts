import { sql, type Kysely, type SqlBool } from 'kysely'
import { WarrantError } from '../contract/index.js'
import { writingTransaction, type Database, type OperationRow, type OperationTargetRow, type Store } from '../store/index.js'
import { ledgerBatch } from './ledger-batch.js'
import { waitWords, type RateLimitKind } from './wait-words.js'
import { TARGET_STATES, type HaltReason, type OperationState, type TargetCounts, type TargetState } from './types.js'

/**
 * The per-target ledger: every state change of a target is a conditional UPDATE, so a target moves only
 * from the state the executor believes it is in. `in_flight` is committed before any upstream call for the
 * target, and only by the holder of a live lease on the operation.
 */

type Db = Kysely<Database>

/** What a target ended as, with everything the results show. */
export interface TargetOutcome {
  readonly state: Exclude<TargetState, 'pending' | 'in_flight'>
  readonly reason: string | null
  readonly message?: string | null
  readonly upstream_status?: number | null
  readonly before?: Readonly<Record<string, unknown>> | null
  readonly after?: Readonly<Record<string, unknown>> | null
  /** the record's version right after our write, when the upstream said */
  readonly after_version?: string | null
}

export const INTERRUPTED_REASON = 'interrupted: no durable answer'
/** A target whose write was sent and answered 429, never retried: its operation halted first (`endOperation`). */
export const RATE_LIMITED_HALTED = 'rate_limited_halted'

export async function findOperationByKey(db: Db, key: string): Promise<OperationRow | undefined> {
  return db.selectFrom('operations').selectAll().where('idempotency_key', '=', key).executeTakeFirst()
}

export async function loadOperationRow(db: Db, operationId: string): Promise<OperationRow> {
  const row = await db.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirst()
  if (!row) throw new WarrantError('not_found', `no operation "${operationId}"`, { operation_id: operationId })
  return row
}

/**
 * pending → in_flight, only while `owner` holds a live lease on the operation (a fence: an executor that lost
 * its lease can never put another target in flight). Durable when it returns: its transaction has committed
 * (shared with the other transitions asked for in the same turn, see `ledgerBatch`).
 */
export async function markInFlight(db: Db, operationId: string, ord: number, owner: string, now: string): Promise<boolean> {
  return ledgerBatch(db).submit({ kind: 'in_flight', operationId, ord, owner, now })
}

/**
 * in_flight → its outcome. False when the target is no longer in flight (another instance declared it unknown).
 * Committed with the outcomes of other targets that end within a few milliseconds (see `ledgerBatch`).
 */
export async function recordOutcome(db: Db, operationId: string, ord: number, outcome: TargetOutcome, now: string): Promise<boolean> {
  const set = {
    state: outcome.state,
    reason: outcome.reason,
    error: outcome.message ? JSON.stringify({ message: outcome.message }) : null,
    upstream_status: outcome.upstream_status ?? null,
    ...(outcome.before === undefined ? {} : { before: outcome.before === null ? null : JSON.stringify(outcome.before) }),
    after: outcome.after ? JSON.stringify(outcome.after) : null,
    after_version: outcome.after_version ?? null,
    // the moment the executor stopped waiting for the write: reconciliation's settle window starts here
    unknown_since: outcome.state === 'unknown' ? now : null,
    updated_at: now,
  }
  return ledgerBatch(db).submit({ kind: 'update', operationId, ord, set, fromState: 'in_flight', linger: true })
}

/**
 * in_flight → pending, for a durable "not done" (a 429, or a 503 with Retry-After, before or instead of the write),
 * counted on the row in the same statement: an executor resuming the operation goes on counting toward
 * `max_rate_limit_retries` (see `rateLimitHitsSoFar`). `status`: the upstream's answer; null where it answered
 * none (a database's lock refusal).
 */
export async function returnToPending(db: Db, operationId: string, ord: number, message: string, now: string, status: number | null = 429, writeSent = false): Promise<boolean> {
  const set = { state: 'pending', reason: 'rate_limited', error: rateLimitedError(message, writeSent), upstream_status: status, rate_limit_hits: sql`rate_limit_hits + 1`, updated_at: now }
  return ledgerBatch(db).submit({ kind: 'update', operationId, ord, set, fromState: 'in_flight' })
}

/**
 * The error a target put back to pending carries. `write_sent`: a write of it was sent and answered "not now" (a
 * 429 on the write, not on a read before it), now or on an earlier turn; kept on the row, so a restarted executor
 * still knows that write may have landed (an upstream that applies a write and answers 429 all the same).
 */
export function rateLimitedError(message: string, writeSent: boolean): string {
  return JSON.stringify(writeSent ? { message, write_sent: true } : { message })
}

/** Whether a target pending again had a write sent and answered 429 (`rateLimitedError`). */
export function rateLimitedWriteSent(target: Pick<OperationTargetRow, 'reason' | 'error'>): boolean {
  if (target.reason !== 'rate_limited' || target.error === null) return false
  try {
    return (JSON.parse(target.error) as { write_sent?: unknown }).write_sent === true
  } catch {
    return false
  }
}

/**
 * A "not now" for a target still pending (a batch's membership read answered 429 before any target of it was
 * claimed), counted on its row as `returnToPending` counts one, only while this executor holds the lease.
 */
export async function countPendingRateLimit(db: Db, operationId: string, ord: number, owner: string): Promise<void> {
  await db
    .updateTable('operation_targets')
    .set({ rate_limit_hits: sql`rate_limit_hits + 1` })
    .where('operation_id', '=', operationId)
    .where('ord', '=', ord)
    .where('state', '=', 'pending')
    .where(({ exists, selectFrom }) => exists(selectFrom('operations').select(sql<number>`1`.as('one')).where('id', '=', operationId).where('lease_owner', '=', owner)))
    .execute()
}

/**
 * The 429s each pending target was answered so far, by ord: an executor resuming the operation (a restart, a
 * takeover) counts on from them, else an upstream answering 429 forever with a restart between never halted it.
 * Only pending targets can be asked again; those with none are left out.
 */
export async function rateLimitHitsSoFar(db: Db, operationId: string): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('operation_targets')
    .select(['ord', 'rate_limit_hits'])
    .where('operation_id', '=', operationId)
    .where('state', '=', 'pending')
    .where(throttled)
    .execute()
  return new Map(rows.map((r) => [Number(r.ord), Number(r.rate_limit_hits)]))
}

/** The upstream's "not now" answers over an operation's targets: how many, and on how many targets. */
export interface RateLimitTotals {
  readonly hits: number
  readonly targets: number
}

/**
 * The totals every view of the operation shows, summed from the ledger (not kept on the operation's row: they
 * grow while it runs, and a second copy could disagree with the per-target counts the results show).
 */
export async function rateLimitTotals(db: Db, operationId: string): Promise<RateLimitTotals> {
  const row = await rateLimitTotalsQuery(db, operationId).executeTakeFirst()
  return { hits: Number(row?.hits ?? 0), targets: Number(row?.targets ?? 0) }
}

/** The statement `rateLimitTotals` runs (its plan is tested: it must read the partial index, never every target). */
export function rateLimitTotalsQuery(db: Db, operationId: string) {
  return db
    .selectFrom('operation_targets')
    .select((eb) => [eb.fn.sum<number | string | null>('rate_limit_hits').as('hits'), eb.fn.countAll<number | string>().as('targets')])
    .where('operation_id', '=', operationId)
    .where(throttled)
}

// Spelled as the partial index `operation_targets_rate_limited_idx` is (migration 0016), a literal: an engine uses
// a partial index only where the query's terms imply its own, which a bound parameter (`> ?`) does not show SQLite.
const throttled = sql<SqlBool>`rate_limit_hits > 0`

/**
 * in_flight → pending for targets this executor claimed and never started (it stopped or halted first, or a 429
 * paused the operation): no call was made for them, so the attempt their claim counted is taken back; `attempts`
 * counts what was sent upstream (each pause counted one more for every target claimed behind it). A target no
 * longer in flight (another executor declared it unknown) is left as it is.
 */
export async function releaseUnstarted(db: Db, operationId: string, ords: readonly number[], now: string): Promise<void> {
  const set = { state: 'pending', attempts: sql`attempts - 1`, updated_at: now }
  await Promise.all(ords.map((ord) => ledgerBatch(db).submit({ kind: 'update', operationId, ord, set, fromState: 'in_flight' })))
}

/** After a claim: every target left in flight by the previous holder has no durable answer. */
export async function markInterrupted(db: Db, operationId: string, now: string): Promise<number> {
  const result = await db
    .updateTable('operation_targets')
    .set({ state: 'unknown', reason: INTERRUPTED_REASON, error: JSON.stringify({ message: 'the executor stopped after recording the target in flight and before recording its answer; the write may or may not have happened' }), unknown_since: now, updated_at: now })
    .where('operation_id', '=', operationId)
    .where('state', '=', 'in_flight')
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** The next targets in `state` after `afterOrd`, in member order: an index seek on (operation_id, state, ord). */
export async function targetsInState(db: Db, operationId: string, state: TargetState, afterOrd: number, limit: number): Promise<OperationTargetRow[]> {
  return db
    .selectFrom('operation_targets')
    .selectAll()
    .where('operation_id', '=', operationId)
    .where('state', '=', state)
    .where('ord', '>', afterOrd)
    .orderBy('ord')
    .limit(limit)
    .execute()
}

export function emptyCounts(): TargetCounts {
  return Object.fromEntries(TARGET_STATES.map((s) => [s, 0])) as TargetCounts
}

/** Targets per state, straight from the ledger. */
export async function countTargets(db: Db, operationId: string): Promise<TargetCounts> {
  const rows = await db
    .selectFrom('operation_targets')
    .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
    .where('operation_id', '=', operationId)
    .groupBy('state')
    .execute()
  const counts = emptyCounts()
  for (const row of rows) counts[row.state] = Number(row.n)
  return counts
}

/** Validation refusals already recorded (a resumed operation keeps counting toward its threshold). */
export async function countValidationFailures(db: Db, operationId: string): Promise<number> {
  const row = await db
    .selectFrom('operation_targets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('operation_id', '=', operationId)
    .where('state', '=', 'failed')
    .where('reason', '=', 'rejected')
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

/**
 * How many targets in a row, counting back from the last one that ended (in member order), ended `failed` or
 * `unknown`, up to `limit`: the streak `halt_after_consecutive_errors` counts, for an executor resuming the
 * operation (a restart, a takeover), which would otherwise start it at 0 and let as many errors again through.
 * A target left in flight by the executor before and declared unknown at the claim (`INTERRUPTED_REASON`) is no
 * answer of the upstream's: it neither extends the streak nor ends it. Each ended state is read back from its
 * last `limit` targets (an index seek on (operation_id, state, ord)), never the whole ledger.
 */
export async function errorsInARow(db: Db, operationId: string, limit: number): Promise<number> {
  if (limit <= 0) return 0
  const ended = await Promise.all(
    (['succeeded', 'skipped', 'failed', 'unknown'] as const).map((state) => {
      let query = db.selectFrom('operation_targets').select(['ord', 'state']).where('operation_id', '=', operationId).where('state', '=', state)
      if (state === 'unknown') query = query.where((eb) => eb.or([eb('reason', 'is', null), eb('reason', '!=', INTERRUPTED_REASON)]))
      return query.orderBy('ord', 'desc').limit(limit).execute()
    }),
  )
  const last = ended.flat().sort((a, b) => b.ord - a.ord)
  let streak = 0
  for (const target of last) {
    if (target.state === 'succeeded' || target.state === 'skipped' || streak >= limit) break
    streak += 1
  }
  return streak
}

/**
 * The state an operation ends in once nothing is pending, named for what happened: `succeeded` only when every
 * target succeeded; a skip or an unknown is not a failure, and a failure is never hidden behind either.
 */
export function finalState(counts: TargetCounts, halted: boolean): OperationState {
  if (halted) return 'halted'
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  if (counts.succeeded === total) return 'succeeded'
  if (counts.failed > 0) return counts.succeeded > 0 ? 'partially_failed' : 'failed'
  return counts.unknown > 0 ? 'completed_with_unknown' : 'completed_with_skips'
}

/** Stores the running counts (the view computes them live while the operation runs). */
export async function storeCounts(db: Db, operationId: string, counts: TargetCounts, now: string): Promise<void> {
  await db.updateTable('operations').set({ counts: JSON.stringify(counts), updated_at: now }).where('id', '=', operationId).execute()
}

/** Ends an operation: its final state, halt reason and counts, and the lease released, only by its holder. */
export async function finishOperation(
  db: Db,
  operationId: string,
  owner: string,
  end: { readonly state: OperationState; readonly haltReason: HaltReason | null; readonly counts: TargetCounts; readonly now: string },
): Promise<boolean> {
  const result = await db
    .updateTable('operations')
    .set({
      state: end.state,
      halt_reason: end.haltReason ? JSON.stringify(end.haltReason) : null,
      counts: JSON.stringify(end.counts),
      lease_owner: null,
      lease_expires_at: null,
      paused_until: null,
      pause_reason: null,
      updated_at: end.now,
      finished_at: end.now,
    })
    .where('id', '=', operationId)
    .where('lease_owner', '=', owner)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** How `endOperation` ended the run: `finished` false when the lease was no longer ours (nothing was changed). */
export interface RunEnd {
  readonly finished: boolean
  readonly state: OperationState
  readonly counts: TargetCounts
  /** the record ids of the targets a halt turned from pending (a write sent and answered 429) to unknown */
  readonly nowUnknown: readonly string[]
}

/**
 * Ends an operation (`finishOperation`) with counts read in the same transaction. A halted one first turns each
 * pending target whose write was sent and answered 429 (`rateLimitedWriteSent`) `unknown`, `RATE_LIMITED_HALTED`:
 * the upstream may have applied that write all the same, the retry that would have read the record first never
 * comes (a halted operation is final), and reconcile reads only unknown targets. Left pending it was shown as never
 * attempted, forever. A pending target whose write was never sent stays pending. Nothing changes unless the lease
 * is still `owner`'s.
 */
export async function endOperation(store: Pick<Store, 'db' | 'dialect'>, operationId: string, owner: string, halt: HaltReason | null, now: string, kind: RateLimitKind | null): Promise<RunEnd> {
  const lost = Symbol('lease lost')
  try {
    return await writingTransaction(store, async (trx) => {
      const nowUnknown = halt === null ? [] : await unknownAtHalt(trx, operationId, halt, now, kind)
      const counts = await countTargets(trx, operationId)
      const state = finalState(counts, halt !== null)
      if (!(await finishOperation(trx, operationId, owner, { state, haltReason: halt, counts, now }))) throw lost
      return { finished: true, state, counts, nowUnknown }
    })
  } catch (error) {
    if (error !== lost) throw error
    return { finished: false, state: 'halted', counts: emptyCounts(), nowUnknown: [] }
  }
}

/**
 * `endOperation`'s pending → unknown for the targets whose write was sent and answered 429; their record ids. Also
 * run by reconcile on a halted operation, for one an earlier version halted and left such targets pending. `kind`:
 * the operation's `rate_limit_kind`, what those answers were (a 429; on a sql resource, a COMMIT refused for a lock).
 */
export async function unknownAtHalt(db: Db, operationId: string, halt: HaltReason, now: string, kind: RateLimitKind | null): Promise<string[]> {
  const words = waitWords(kind).write
  // every target put back after a 429 counted it (`returnToPending`): the partial index on rate_limit_hits finds them
  const rows = await db.selectFrom('operation_targets').select(['ord', 'record_id', 'reason', 'error']).where('operation_id', '=', operationId).where('state', '=', 'pending').where(throttled).execute()
  const sent = rows.filter(rateLimitedWriteSent)
  for (const row of sent) {
    const answer = (JSON.parse(row.error!) as { message?: unknown }).message
    const message = `a write of record "${row.record_id}" ${words.sent} and not retried because the operation halted (${halt.rule}); ${words.mayHave}: reconcile to settle it${typeof answer === 'string' ? ` (the answer: ${answer})` : ''}`
    await db
      .updateTable('operation_targets')
      .set({ state: 'unknown', reason: RATE_LIMITED_HALTED, error: JSON.stringify({ message }), unknown_since: now, updated_at: now })
      .where('operation_id', '=', operationId)
      .where('ord', '=', row.ord)
      .where('state', '=', 'pending')
      .execute()
  }
  return sent.map((row) => row.record_id)
}

/** After a reconciliation: the finished operation's counts and state follow its ledger. */
export async function refreshFinished(db: Db, operationId: string, now: string): Promise<void> {
  const row = await loadOperationRow(db, operationId)
  const counts = await countTargets(db, operationId)
  const state = row.state === 'halted' || !isFinished(row.state) ? row.state : finalState(counts, false)
  await db.updateTable('operations').set({ state, counts: JSON.stringify(counts), updated_at: now }).where('id', '=', operationId).execute()
}

function isFinished(state: OperationState): boolean {
  return state !== 'pending' && state !== 'running'
}
