import { type Actor, ROLES, scopesSchema, WarrantError } from '../contract/index.js'
import type { PlanRow, Store, StoreDialect } from '../store/index.js'
import { approvalExpiredAt, approvalsOf, distinctApprovers, type ApprovalEntry } from './approval-decisions.js'
import { isApproverReason, withdrawnApprovalSentences } from './approval-not-counted.js'
import { ttlCutSentence } from './approval-ttl.js'
import { planInActionScope } from './compensation.js'
import type { PlanRecord } from './plan-service.js'

/**
 * The refusal of a rejected plan. Proposing the same action on its selection answers this plan again (proposing is
 * idempotent), so the way to try again is a new selection: saying "propose a new plan" sent agents round to it.
 */
export function rejectedPlan(planId: string, selectionId: string): WarrantError {
  return new WarrantError(
    'conflict',
    `plan ${planId} was rejected, for good: proposing the same action on selection ${selectionId} answers this plan again; to try again, create a new selection and propose on it`,
    { plan_id: planId, state: 'rejected' },
  )
}

/**
 * The distinct approvers that make a plan committable at `now`, or the refusal: `expired` (410) when enough had
 * approved but some lapsed, `not_approved` (403) otherwise. An approval that stopped counting because of its approver
 * (token revoked, principal disabled, no longer a reviewer or in scope) is named, with `reason` the first such cause:
 * "it has 0" alone read as if nobody had approved, and the agent asked the same reviewer again.
 */
export function approversOrRefusal(row: PlanRow, entries: readonly ApprovalEntry[], reviewersNeeded: number, now: string, why?: string): ApprovalEntry[] {
  const approvers = distinctApprovers(entries)
  if (approvers.length >= reviewersNeeded) return approvers
  const withdrawn = entries.filter((e) => isApproverReason(e.not_counted))
  const expiredAt = approvalExpiredAt(row, entries, { reviewers_needed: reviewersNeeded }, now)
  if (expiredAt && withdrawn.length === 0) {
    // lapsed before its stored expiry because the operator shortened the TTL since: said, or the earlier end looks like a fault
    const cut = entries.filter((e) => e.not_counted === 'lapsed' && e.ttl_cut !== null)
    const why = cut.map((e) => ttlCutSentence({ ...e, ttl_cut: e.ttl_cut! }, row.resource))
    const last = cut.at(-1)?.ttl_cut
    throw new WarrantError('expired', `the approval of plan ${row.id} expired (at ${expiredAt}); a reviewer must approve it again${why.length > 0 ? `; ${why.join('; ')}` : ''}`, {
      plan_id: row.id,
      ...(last ? { ttl_minutes: { given: last.given_minutes, now: last.ttl_minutes } } : {}),
    })
  }
  const named = withdrawnApprovalSentences(entries)
  throw new WarrantError(
    'not_approved',
    `plan ${row.id} needs ${reviewersNeeded} distinct reviewer approval(s) of digest ${row.plan_digest}${why ? ` (${why})` : ''}; it has ${approvers.length}${named.length > 0 ? `; ${named.join('; ')}` : ''}`,
    {
      plan_id: row.id,
      reviewers_needed: reviewersNeeded,
      approvals: approvers.length,
      ...(withdrawn.length > 0
        ? { reason: withdrawn[0]!.not_counted, not_counted: withdrawn.map((e) => ({ approval_id: e.approval_id, principal: e.principal, name: e.name, reason: e.not_counted })) }
        : {}),
    },
  )
}

/**
 * Run inside the transaction that records a plan's operation, once the plan's row is locked by the update that marks
 * it committed (only from pending or approved: a rejection landed before is seen there): the authority the commit
 * stands on must still hold at `now`, the committer's and the approval `assertCommittable` found. Between that check
 * and this transaction an approval can lapse, an approver or the committer be disabled, a token be revoked; the
 * operation is recorded only on an authority that holds when it is, so the whole transaction rolls back otherwise. A
 * rejection takes the same row lock (see `decide`), so it lands wholly before the update or after the commit (it then
 * finds the plan committed).
 *
 * A disable or revocation at the same instant lands wholly before or after the commit, never in between: on
 * PostgreSQL the principals' and tokens' rows are read under a share lock (one committed before is seen, one in
 * flight is waited for and then seen, one that comes later waits for this transaction); on SQLite the write lock this
 * transaction holds since its first statement does the same. Read without the lock, a disable committed after the
 * check had read the row, and the operation was recorded after it.
 *
 * @example await assertAuthorityHolds(trx, store.dialect, { plan, committer: actor, reviewersNeeded: committable.reviewers_needed, ttlMinutes: committable.approval_ttl_minutes, now })
 */
export async function assertAuthorityHolds(
  db: Store['db'],
  dialect: StoreDialect,
  commit: { readonly plan: CommittedPlan; readonly committer: Actor; readonly reviewersNeeded: number; readonly ttlMinutes: number; readonly now: string },
): Promise<void> {
  const { plan, committer, reviewersNeeded, ttlMinutes, now } = commit
  const planId = plan.plan_id
  if (dialect === 'postgres') {
    const approvals = await db.selectFrom('approvals').select(['principal', 'token_id']).where('plan_id', '=', planId).execute()
    // the proposer's too: its disable voids the approvals given before it (see `notCountedOf`)
    const proposer = await db.selectFrom('plans').select('proposed_by').where('id', '=', planId).executeTakeFirstOrThrow()
    const principals = [...new Set([committer.principal, proposer.proposed_by, ...approvals.map((a) => a.principal)])].sort()
    const tokens = [...new Set([committer.token_id, ...approvals.map((a) => a.token_id)].filter((t): t is string => typeof t === 'string'))].sort()
    await db.selectFrom('principals').select('id').where('id', 'in', principals).orderBy('id').forShare().execute()
    if (tokens.length > 0) await db.selectFrom('tokens').select('id').where('id', 'in', tokens).orderBy('id').forShare().execute()
  }
  await assertCommitterHolds(db, committer, plan)
  // a standing approval is the config's, which does not change under a running process
  if (reviewersNeeded === 0) return
  const row = await db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirstOrThrow()
  approversOrRefusal(row, await approvalsOf({ db }, row, now, ttlMinutes), reviewersNeeded, now)
}

/** What the committer's authority is judged against: the plan's resource and action. */
type CommittedPlan = Pick<PlanRecord, 'plan_id' | 'resource' | 'action' | 'compensates'>

/**
 * The committer was authenticated as the request arrived, with its principal's role and scopes as they were then; a
 * token revoked, a principal disabled, or a scope that no longer holds the plan's action (an operator narrowed it, or
 * changed the role and scopes) since must not commit. The CLI's local operator and the gateway itself have no principal
 * row and no token: nothing to withdraw.
 */
async function assertCommitterHolds(db: Store['db'], committer: Actor, plan: CommittedPlan): Promise<void> {
  const principal = await db.selectFrom('principals').select(['disabled_at', 'role', 'scopes']).where('id', '=', committer.principal).executeTakeFirst()
  const token = committer.token_id === undefined ? undefined : await db.selectFrom('tokens').select('revoked_at').where('id', '=', committer.token_id).executeTakeFirst()
  const withdrawn = principal?.disabled_at ? 'its principal was disabled' : committer.token_id !== undefined && (!token || token.revoked_at) ? 'it was revoked' : null
  if (withdrawn)
    throw new WarrantError('unauthenticated', `the token this commit was made with no longer authenticates (${withdrawn}) as the commit was to be recorded; nothing was committed`, {
      principal: committer.principal,
    })
  if (principal && !inActionScopeNow(committer, principal, plan))
    throw new WarrantError(
      'forbidden',
      `action "${plan.action.type}" on "${plan.resource}" is no longer within the committer's scope: its principal's role or scopes changed since this request was authenticated; nothing was committed`,
      { resource: plan.resource, action: plan.action.type, principal: committer.principal, reason: 'committer_out_of_scope' },
    )
}

/** The rule the commit applied to the request's actor (`planInActionScope`), on the principal's role and scopes as stored now. */
function inActionScopeNow(committer: Actor, row: { readonly role: string; readonly scopes: string }, plan: CommittedPlan): boolean {
  const role = ROLES.find((r) => r === row.role)
  let scopes: ReturnType<typeof scopesSchema.safeParse>
  try {
    scopes = scopesSchema.safeParse(JSON.parse(row.scopes))
  } catch {
    return false
  }
  return role !== undefined && scopes.success && planInActionScope({ ...committer, role, scopes: scopes.data }, plan)
}
