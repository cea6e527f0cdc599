import { type Actor, inScope, scopesSchema } from '../contract/index.js'
import type { PlanRow } from '../store/index.js'
import { COMPENSATE, planInActionScope } from './compensation.js'
import { toRecord } from './plan-context.js'

/**
 * Why an approval does not count now. The `approver_…` reasons are about the person, judged as they stand now, not
 * as they stood when they approved: an approval is one person's act with one token, and when that token is revoked (it
 * leaked), the principal disabled (compromised, or gone), or their role or scope no longer lets them approve this
 * plan, the approval no longer authorises a commit.
 */
export const NOT_COUNTED = [
  'other_digest',
  'proposer',
  'approver_revoked',
  'approver_disabled',
  'approver_disabled_since',
  'proposer_disabled_since',
  'config_drifted_since',
  'approver_not_reviewer',
  'approver_out_of_scope',
  'lapsed',
] as const
export type NotCounted = (typeof NOT_COUNTED)[number]

const WORDS: Readonly<Record<NotCounted, string>> = {
  other_digest: 'it approved another plan digest',
  proposer: 'the approver proposed this plan',
  approver_revoked: 'the token it was given with was revoked',
  approver_disabled: 'the approver is disabled',
  approver_disabled_since: 'the approver was disabled after giving it; an enable does not bring back what was decided before a disable',
  proposer_disabled_since: "the plan's proposer was disabled after it was given; a reviewer must approve the plan again",
  config_drifted_since:
    'the config moved under this plan after it was given (it was shown as unable to run); putting the config back does not bring back what was approved before, a reviewer must approve it again',
  approver_not_reviewer: 'the approver is no longer a reviewer or admin',
  approver_out_of_scope: "the approver's scope no longer covers this plan's action",
  lapsed: 'it lapsed',
}

/** The reason in words, for refusals and the review page. */
export function notCountedWords(reason: NotCounted): string {
  return WORDS[reason]
}

/**
 * Whether the reason withdrew an approval that counted (its approver's authority now, or a disable of the approver or
 * the proposer since, the config moving under the plan since), rather than the approval's digest or expiry: these are
 * named wherever the plan is shown.
 */
export function isApproverReason(reason: NotCounted | null): reason is Exclude<NotCounted, 'other_digest' | 'proposer' | 'lapsed'> {
  return reason !== null && (reason.startsWith('approver_') || reason === 'proposer_disabled_since' || reason === 'config_drifted_since')
}

/**
 * Each approval a withdrawal voided, as one sentence naming who, when and why: the commit's refusal, the CLI and the MCP
 * summary say it so (the review page draws the same). "It has 0" alone read as if nobody had approved, and the agent
 * asked the same reviewer again.
 */
export function withdrawnApprovalSentences(entries: readonly { readonly name: string | null; readonly principal: string; readonly decided_at: string; readonly not_counted: NotCounted | null }[]): string[] {
  return entries.filter((e) => isApproverReason(e.not_counted)).map((e) => `the approval by "${e.name ?? e.principal}" at ${e.decided_at} no longer counts: ${notCountedWords(e.not_counted!)} (${e.not_counted})`)
}

/** One stored approval with its principal and token as they stand now (left-joined: either may be missing). */
export interface ApprovalStanding {
  readonly principal: string
  readonly name: string | null
  readonly plan_digest: string
  readonly decided_at: string
  readonly expires_at: string | null
  readonly token_id: string | null
  /** the token's row id when it still exists */
  readonly token_found: string | null
  readonly token_revoked_at: string | null
  readonly role: Actor['role'] | null
  readonly disabled_at: string | null
  /** the approver's most recent disable, kept by an enable */
  readonly last_disabled_at: string | null
  readonly scopes: string | null
}

/**
 * Null when the approval counts at `now`; else the first reason it does not. `proposerLastDisabledAt` is the plan's
 * proposer's most recent disable: a plan proposed by a principal that was then disabled (compromised, or gone) needs a
 * person to approve it after that, as one approved by a principal that was then disabled does.
 */
export function notCountedOf(row: PlanRow, a: ApprovalStanding, now: string, proposerLastDisabledAt: string | null): NotCounted | null {
  if (a.plan_digest !== row.plan_digest) return 'other_digest'
  if (a.principal === row.proposed_by) return 'proposer'
  // An approval from before tokens were kept (null) is judged by its principal alone; a kept token gone from the
  // store cannot be shown not to be revoked.
  if (a.token_id !== null && (a.token_found === null || a.token_revoked_at !== null)) return 'approver_revoked'
  if (a.disabled_at !== null) return 'approver_disabled'
  // `decided_at` and the disable's time are both the store's clock; a tie is a decision the disable did not follow
  if (a.last_disabled_at !== null && a.decided_at <= a.last_disabled_at) return 'approver_disabled_since'
  if (proposerLastDisabledAt !== null && a.decided_at <= proposerLastDisabledAt) return 'proposer_disabled_since'
  // the store's clock too (see config-drift.ts `recordDriftSeen`); a tie is an approval the drift did not follow
  if (row.config_drifted_at !== null && a.decided_at <= row.config_drifted_at) return 'config_drifted_since'
  if (a.role !== 'reviewer' && a.role !== 'admin') return 'approver_not_reviewer'
  if (!inScopeNow(row, a)) return 'approver_out_of_scope'
  if (a.expires_at === null || a.expires_at <= now) return 'lapsed'
  return null
}

/** The rule `decide` applied when the approval was given, on the principal's scopes as they are now. */
function inScopeNow(row: PlanRow, a: ApprovalStanding): boolean {
  const parsed = scopesSchema.safeParse(a.scopes === null ? null : JSON.parse(a.scopes))
  if (!parsed.success) return false
  const actor: Actor = { principal: a.principal, name: a.name ?? a.principal, role: a.role ?? 'agent', scopes: parsed.data, surface: 'system' }
  const plan = toRecord(row)
  return planInActionScope(actor, plan) || inScope(actor, row.resource, row.compensates ? COMPENSATE : plan.action.type)
}
