import { randomBytes } from 'node:crypto'
import { type Actor, type Filter, WarrantError } from '../contract/index.js'
import { parseRequest } from '../selections/parse-request.js'
import type { SelectionRecord } from '../selections/selection-service.js'
import { writingTransaction, type PlanRow, type Store } from '../store/index.js'
import { actionConfigOf } from './actions.js'
import { policyNow, type StoredPolicy } from './approval-policy.js'
import { COMPENSATE, displayParams, planInActionScope } from './compensation.js'
import { assertConfigUnchanged } from './config-drift.js'
import { type NotCounted, notCountedOf } from './approval-not-counted.js'
import { storeTtlCut, storedCutOf, type TtlCut, ttlCutOf } from './approval-ttl.js'
import { type PlanContext, loadRow, loadRowAt, scoped, selectionOf, toRecord } from './plan-context.js'
import type { PlanRecord } from './plan-service.js'
import { type ApprovalResult, approvalRequestSchema } from './schemas.js'

export interface ApprovalEntry {
  readonly approval_id: string
  readonly decision: 'approve' | 'reject'
  readonly principal: string
  readonly name: string | null
  readonly comment: string | null
  readonly decided_at: string
  readonly expires_at: string | null
  readonly plan_digest: string
  /** Judged as of `now`: an approval stops counting when it lapses or its principal loses the right to give it. */
  readonly valid: boolean
  /** Why an approval does not count now (null when it does, and for a rejection). */
  readonly not_counted: NotCounted | null
  /** Set when the TTL the config asks now ends it before its stored expiry (`expires_at` is then the earlier end). */
  readonly ttl_cut: TtlCut | null
}

/**
 * Every decision on a plan, each approval judged at `now` with its principal and token as they stand now, and lasting
 * until the earlier of its stored expiry and its time plus `ttlMinutes` (the TTL the plan is held to now, `policyNow`);
 * that earlier end, once seen, is stored (`storeTtlCut`).
 * Inside the commit transaction this is what decides; read there after `lockApprovers`, a disable or revocation that
 * committed before is seen, and one that comes later waits for the commit.
 */
export async function approvalsOf(ctx: Pick<PlanContext, 'db'>, row: PlanRow, now: string, ttlMinutes: number): Promise<ApprovalEntry[]> {
  const rows = await ctx.db
    .selectFrom('approvals')
    .leftJoin('principals', 'principals.id', 'approvals.principal')
    .leftJoin('tokens', 'tokens.id', 'approvals.token_id')
    .select([
      'approvals.id as id',
      'approvals.decision as decision',
      'approvals.principal as principal',
      'approvals.comment as comment',
      'approvals.decided_at as decided_at',
      'approvals.expires_at as expires_at',
      'approvals.ttl_given_until as ttl_given_until',
      'approvals.plan_digest as plan_digest',
      'approvals.token_id as token_id',
      'tokens.id as token_found',
      'tokens.revoked_at as token_revoked_at',
      'principals.name as name',
      'principals.role as role',
      'principals.disabled_at as disabled_at',
      'principals.last_disabled_at as last_disabled_at',
      'principals.scopes as scopes',
    ])
    .where('approvals.plan_id', '=', row.id)
    .orderBy('approvals.decided_at')
    .orderBy('approvals.id')
    .execute()
  const proposer = await ctx.db.selectFrom('principals').select('last_disabled_at').where('id', '=', row.proposed_by).executeTakeFirst()
  const cuts = new Map(rows.flatMap((stored) => (stored.decision === 'approve' ? [[stored.id, ttlCutOf(stored, ttlMinutes)] as const] : [])))
  for (const [id, cut] of cuts) if (cut) await storeTtlCut(ctx.db, id, cut)
  return rows.map((stored) => {
    // a cut stored before (by a view, a commit, a gateway opening on the shorter TTL) is still named as one
    const cut = cuts.get(stored.id) ?? (stored.decision === 'approve' ? storedCutOf(stored) : null)
    const r = cut ? { ...stored, expires_at: cut.expires_at } : stored
    const notCounted = r.decision === 'approve' ? notCountedOf(row, r, now, proposer?.last_disabled_at ?? null) : null
    return {
      approval_id: r.id,
      decision: r.decision,
      principal: r.principal,
      name: r.name ?? null,
      comment: r.comment,
      decided_at: r.decided_at,
      expires_at: r.expires_at,
      plan_digest: r.plan_digest,
      valid: r.decision === 'approve' && notCounted === null,
      not_counted: notCounted,
      ttl_cut: cut,
    }
  })
}

/**
 * The decider was authenticated as its request arrived; a disable that committed since must not be followed by its
 * decision. Recorded after the disable, an approval was void while the principal stood disabled, and counted once it
 * was enabled again (its `decided_at` came after the disable's watermark). Read in the decision's transaction: on
 * PostgreSQL under a share lock (a disable in flight is waited for and seen; one that comes later waits for this
 * decision, and its watermark then voids it), on SQLite under the write lock the transaction took up front.
 */
async function assertDeciderEnabled(db: Store['db'], dialect: Store['dialect'], actor: Actor): Promise<void> {
  let read = db.selectFrom('principals').select(['disabled_at', 'name']).where('id', '=', actor.principal)
  if (dialect === 'postgres') read = read.forShare()
  const principal = await read.executeTakeFirst()
  if (principal?.disabled_at)
    throw new WarrantError('unauthenticated', `the principal "${principal.name}" was disabled (at ${principal.disabled_at}) before this decision could be recorded; nothing was recorded`, {
      reason: 'principal_disabled',
    })
}

/** Distinct principals with a valid approval, earliest first. */
export function distinctApprovers(entries: readonly ApprovalEntry[]): ApprovalEntry[] {
  const seen = new Map<string, ApprovalEntry>()
  for (const e of entries) if (e.valid) seen.set(e.principal, e)
  return [...seen.values()]
}

/**
 * When enough approvals for this digest existed but some have lapsed, the time the last of them lapsed;
 * else null. The plan is then pending again (a reviewer must approve it again) and a commit is refused as
 * `expired`, not `not_approved`: the view and the commit check read it from here.
 */
export function approvalExpiredAt(row: PlanRow, entries: readonly ApprovalEntry[], policy: Pick<StoredPolicy, 'reviewers_needed'>, now: string): string | null {
  const approvers = distinctApprovers(entries)
  if (approvers.length >= policy.reviewers_needed) return null
  const lapsed = entries.filter((e) => e.decision === 'approve' && e.not_counted === 'lapsed' && e.expires_at !== null)
  if (lapsed.length === 0) return null
  if (new Set([...approvers.map((a) => a.principal), ...lapsed.map((e) => e.principal)]).size < policy.reviewers_needed) return null
  return lapsed.map((e) => e.expires_at!).sort().at(-1)!
}

/** The stored state lags time (approvals and selections expire unattended), so readers derive the state as of now. */
export function effectiveState(row: PlanRow, selection: SelectionRecord, policy: StoredPolicy, entries: readonly ApprovalEntry[], now: string): PlanRecord['state'] {
  if (row.state === 'rejected' || row.state === 'committed') return row.state
  if (selection.expires_at <= now) return 'expired'
  // Nothing on an incomplete selection can be approved or committed, whatever was stored (plans proposed before
  // standing approvals checked completeness were stored `approved`).
  if (!selection.complete) return 'pending'
  return distinctApprovers(entries).length >= policy.reviewers_needed ? 'approved' : 'pending'
}

/** A reviewer's decision, bound to the exact plan digest they saw. */
export async function decide(ctx: PlanContext, actor: Actor, planId: string, input: unknown): Promise<ApprovalResult> {
  const { store, selections } = ctx
  const request = parseRequest(approvalRequestSchema, input, 'approval')
  if (actor.role !== 'reviewer' && actor.role !== 'admin')
    throw new WarrantError('forbidden', `only a reviewer or an admin can approve or reject a plan; this principal is an ${actor.role}`, { role: actor.role })
  // The store's now, read with the row (see loadRowAt): the approval's expiry counts from it, as every instance judges
  // it (counted from a clock running ahead, it lasted longer than its time for the others).
  const { row, now: decidedAt } = await loadRowAt(ctx, planId)
  scoped(actor, row.resource)
  // The same action rule as proposing and committing: a reviewer decides only on what their token may do.
  const plan = toRecord(row)
  if (!planInActionScope(actor, plan)) scoped(actor, row.resource, row.compensates ? COMPENSATE : plan.action.type)
  // four eyes: told apart from a missing role or scope by `reason`, so a client can say "ask another reviewer"
  if (actor.principal === row.proposed_by)
    throw new WarrantError('forbidden', `the principal who proposed a plan cannot approve or reject it; another reviewer must (plan ${planId} was proposed by "${actor.name}")`, {
      plan_id: planId,
      reason: 'own_proposal',
    })
  if (row.state === 'committed' || row.state === 'rejected')
    throw new WarrantError('conflict', `plan ${planId} is already ${row.state}; it takes no more decisions`, { plan_id: planId, state: row.state })
  const selection = await selectionOf(ctx, row)
  // One reading of the clock for the check and the decision (`decidedAt`): read twice, a selection expiring between
  // the two passed the check and then gave the approval its own expiry, already past, so it was stored lapsed and the
  // plan stayed pending under a 201. Judged at the decision's own time, that selection is refused 410.
  // Saying no needs no complete inventory, so a plan on an incomplete selection can still be rejected; approving it cannot.
  if (request.decision === 'approve' || selections.isExpired(selection, decidedAt)) selections.assertUsable(selection, decidedAt)
  if (selection.digest !== row.selection_digest)
    throw new WarrantError('digest_mismatch', `selection ${selection.selection_id} no longer has the digest this plan was made on`, { plan_id: planId })
  if (request.expected_plan_digest !== row.plan_digest)
    throw new WarrantError('digest_mismatch', `the plan digest you reviewed (${request.expected_plan_digest}) is not this plan's (${row.plan_digest}); review the plan again`, {
      expected: request.expected_plan_digest,
      actual: row.plan_digest,
    })

  const policy = policyNow(ctx.catalogue, row, selection.count)
  // Saying no to a plan the config moved under stays possible; approving one that no commit can run is not.
  if (request.decision === 'approve') await assertConfigUnchanged(ctx, row, plan, policy, decidedAt)
  const ttlEnd = new Date(Date.parse(decidedAt) + policy.ttl_minutes * 60_000).toISOString()
  const expiresAt = request.decision === 'approve' ? (ttlEnd < selection.expires_at ? ttlEnd : selection.expires_at) : null
  const approvalId = `apr_${randomBytes(12).toString('hex')}`

  // Concurrent reviewers must not both see "one short" and leave the plan pending: the state is recounted under a lock.
  const outcome = await writingTransaction(store, async (trx) => {
    let locked = trx.selectFrom('plans').select(['state']).where('id', '=', planId)
    if (store.dialect === 'postgres') locked = locked.forUpdate()
    const current = await locked.executeTakeFirstOrThrow()
    if (current.state === 'committed' || current.state === 'rejected')
      throw new WarrantError('conflict', `plan ${planId} is already ${current.state}; it takes no more decisions`, { plan_id: planId, state: current.state })
    await assertDeciderEnabled(trx, store.dialect, actor)
    // A second approval by a reviewer whose approval of this digest still stands is that approval, not another
    // row: two rows read as two approvals in every list, and a retried click or a second tab must not seem to add
    // a reviewer. Once it has lapsed, approving again is a new approval (with a new expiry).
    // Only an approval that counts stands: one given with a since-revoked token does not, and approving again with a
    // token that holds is a new approval.
    const standing =
      request.decision === 'approve'
        ? (await approvalsOf({ db: trx }, row, decidedAt, policy.ttl_minutes)).filter((e) => e.principal === actor.principal && e.valid).map((e) => ({ id: e.approval_id, decided_at: e.decided_at, expires_at: e.expires_at, comment: e.comment })).at(-1)
        : undefined
    if (!standing)
      await trx
        .insertInto('approvals')
        .values({
          id: approvalId,
          plan_id: planId,
          plan_digest: row.plan_digest,
          decision: request.decision,
          principal: actor.principal,
          comment: request.comment ?? null,
          decided_at: decidedAt,
          expires_at: expiresAt,
          token_id: actor.token_id ?? null,
        })
        .execute()
    let state: PlanRow['state']
    if (request.decision === 'reject') state = 'rejected'
    else {
      // counted by the rule a commit uses, so the stored state never says approved where a commit is refused
      const approvers = distinctApprovers(await approvalsOf({ db: trx }, row, decidedAt, policy.ttl_minutes))
      state = approvers.length >= policy.reviewers_needed ? 'approved' : 'pending'
    }
    await trx.updateTable('plans').set({ state }).where('id', '=', planId).execute()
    return { state, standing }
  })

  const after = await approvalsOf(ctx, await loadRow(ctx, planId), decidedAt, policy.ttl_minutes)
  const still = outcome.state === 'rejected' ? 0 : Math.max(0, policy.reviewers_needed - distinctApprovers(after).length)
  let precondition: Filter = {}
  try {
    precondition = plan.compensates ? {} : actionConfigOf(ctx, plan).precondition
  } catch {
    // The decision is recorded either way; a since-removed action only blanks the echoed precondition.
    precondition = {}
  }
  // A repeated approval answers with the approval that stands: its id, time, expiry and comment, not the request's.
  const standing = outcome.standing
  const at = standing?.decided_at ?? decidedAt
  return {
    approval_id: standing?.id ?? approvalId,
    plan_id: planId,
    plan_digest: row.plan_digest,
    selection_id: row.selection_id,
    selection_digest: row.selection_digest,
    target_count: Number(row.target_count),
    resource: row.resource,
    environment: row.environment,
    action: { type: plan.action.type, params: displayParams(plan), precondition },
    decision: request.decision,
    approved_by: request.decision === 'approve' ? actor.principal : null,
    approved_by_name: request.decision === 'approve' ? actor.name : null,
    approved_at: request.decision === 'approve' ? at : null,
    rejected_by: request.decision === 'reject' ? actor.principal : null,
    decided_at: at,
    expires_at: standing ? standing.expires_at : expiresAt,
    comment: standing ? standing.comment : (request.comment ?? null),
    counted: request.decision === 'approve' && !standing,
    plan_state: outcome.state,
    still_needed: still,
  }
}
