import { z } from 'zod'
import { cursorArgument, filterSchema, queryInteger } from '../contract/index.js'
import { pageCompleteness, planLookalikesSchema } from '../selections/index.js'
import { NOT_COUNTED } from './approval-not-counted.js'

/**
 * Plan and approval request and response shapes, on every surface. Field names are part of the contract.
 */

const paramValue = z.union([z.string().max(2000), z.number(), z.boolean()])

/**
 * An action: `{type, params: {...}}`, or the article's flat form `{type: "pause_collection", reason: "…"}`
 * (every key but `type` and `params` is a parameter). Both give the same canonical payload.
 */
export const actionRequestSchema = z
  .object({
    type: z.string().min(1).max(64).describe("an action name from list_resources"),
    params: z.record(z.string(), paramValue).optional().describe("params, as list_resources lists them"),
  })
  .catchall(paramValue)
  .meta({ id: 'ActionRequest' })
export type ActionRequestInput = z.input<typeof actionRequestSchema>

export const proposePlanRequestSchema = z.strictObject({ action: actionRequestSchema.describe('applied to every member') }).meta({ id: 'ProposePlanRequest' })

export const approvalRequestSchema = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    expected_plan_digest: z.string().min(1).max(200).describe('the plan_digest the reviewer saw; a different one is refused (409)'),
    comment: z.string().max(4000).optional(),
  })
  .meta({ id: 'ApprovalRequest' })
export type ApprovalRequestInput = z.input<typeof approvalRequestSchema>

export const valueCountSchema = z.object({ value: z.unknown(), count: z.number().int().nonnegative() })

export const changeSummarySchema = z
  .object({
    field: z.string(),
    after: z
      .unknown()
      .describe('the value every written target gets (where every target would be skipped: what the write would set); null with after_values when targets get different values'),
    after_values: z.array(valueCountSchema).optional(),
    before: z
      .array(valueCountSchema)
      .describe("the current values (as frozen) of the targets the write is for, most frequent first; skipped targets' are in skipped_before (in a plan proposed before they were told apart, every target's)"),
    before_complete: z.boolean().describe('false when only the most frequent before-values are listed'),
    unchanged: z.number().int().nonnegative().describe('targets written that already hold the after value (a skipped target is not counted)'),
    skipped: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('targets not written: they fail the precondition as frozen (a compensation: no longer hold what the operation wrote, as read at proposal) and would be skipped. Absent: a plan proposed before they were told apart'),
    skipped_before: z
      .array(valueCountSchema)
      .optional()
      .describe('the current values of the skipped targets, most frequent first: NOT written, never the before of a change. Absent: a plan proposed before they were told apart'),
    skipped_before_complete: z.boolean().optional().describe('false when only the most frequent skipped values are listed'),
  })
  .meta({ id: 'ChangeSummary' })

export const approvalPolicySchema = z
  .object({
    required: z.enum(['none', 'one_reviewer', 'two_reviewers']),
    reviewers_needed: z.number().int().min(0).max(2),
    reason: z.string(),
    standing_approval: z.string().nullable(),
    ttl_minutes: z.number().positive().describe('how long an approval stays valid (never past the selection)'),
  })
  .meta({ id: 'ApprovalPolicy' })
export type ApprovalPolicy = z.infer<typeof approvalPolicySchema>

export const approvalEntrySchema = z
  .object({
    approval_id: z.string(),
    decision: z.enum(['approve', 'reject']),
    principal: z.string(),
    name: z.string().nullable(),
    comment: z.string().nullable(),
    decided_at: z.string(),
    expires_at: z.string().nullable(),
    plan_digest: z.string(),
    valid: z.boolean().describe('an approval of this plan digest, not expired, that counts now'),
    not_counted: z
      .enum(NOT_COUNTED)
      .nullable()
      .describe(
        "why this approval does not count now (null when it does, and for a rejection): the approver's token was revoked (approver_revoked), the approver disabled (approver_disabled) or disabled after giving it, even if enabled since (approver_disabled_since), the plan's proposer disabled after it was given (proposer_disabled_since), no longer a reviewer (approver_not_reviewer) or scoped to the action (approver_out_of_scope); it lapsed, approved another digest, or came from the proposer",
      ),
  })
  .meta({ id: 'ApprovalEntry' })

export const configDriftSchema = z
  .object({
    code: z.enum(['environment_changed', 'upstream_moved', 'action_removed', 'action_redefined', 'run_limits_changed']),
    message: z.string(),
  })
  .describe('one way the config moved under the plan since it was proposed')
export type ConfigDrift = z.infer<typeof configDriftSchema>

export const runLimitsSchema = z
  .object({
    concurrency: z.number().int().positive().describe('targets in flight at once'),
    batch_size: z.number().int().positive().describe('targets read (and, without a consistent snapshot, re-read) per batch'),
    max_writes_per_second: z.number().positive().nullable().describe('null: no rate bound beyond the concurrency'),
    halt_after_consecutive_errors: z.number().int().positive().describe('this many targets in a row ending failed or unknown halt the run'),
    halt_after_validation_failures: z.number().int().positive().describe('this many validation refusals in all halt the run'),
    max_retry_after_seconds: z.number().int().nonnegative().describe("a 429's Retry-After asking longer than this halts the run"),
    write_window: z
      .number()
      .int()
      .positive()
      .nullable()
      .optional()
      .describe(
        "a sql resource's connector.write_window: targets one UPDATE writes, so in flight at once (null: unset, the concurrency). Absent: an http resource, or a plan proposed before plans bound it",
      ),
  })
  .meta({ id: 'RunLimits' })

export const planViewSchema = z
  .object({
    plan_id: z.string(),
    selection_id: z.string(),
    resource: z.string(),
    environment: z.string().describe('where the writes land'),
    action: z.object({ type: z.string(), params: z.record(z.string(), z.unknown()), description: z.string() }),
    plan_digest: z.string().describe("sha256 over selection digest, canonical action, the action's definition, resource, environment and (plans proposed since they were bound) run_limits"),
    selection_digest: z.string(),
    target_count: z.number().int().nonnegative(),
    changes: z.object({
      summary: z.array(changeSummarySchema),
      uniform: z.boolean().describe('every target gets the same change'),
      changing: z
        .number()
        .int()
        .nonnegative()
        .nullable()
        .describe(
          'targets the write changes: at least one value it sets differs from what the record holds (as frozen; for a compensation, as read when it was proposed), and it is not skipped for a precondition it already fails (precondition.failing_now). The others already hold every value set, or would be skipped. null when unknown',
        ),
      changes_url: z.string().describe('per-record before → after, page by page'),
    }),
    precondition: z.object({
      filter: filterSchema.describe('must still hold at write time, else the target is skipped'),
      failing_now: z
        .number()
        .int()
        .nonnegative()
        .nullable()
        .describe('members that already fail it (they would be skipped): as frozen, or for a compensation as read when it was proposed; null when unknown'),
      per_target: z.boolean().describe('true for a compensation: each target must still hold the value the operation wrote'),
    }),
    reversible: z.boolean(),
    run_limits: runLimitsSchema
      .nullable()
      .describe(
        "the stop rules and pacing (`execution:` when proposed) its operation runs under, exactly: a config that differs since is config_drift run_limits_changed. null: proposed before plans bound them; it runs under the config's at commit",
      ),
    approval: approvalPolicySchema,
    approval_state: z.object({
      approved: z.boolean(),
      approved_by: z.array(z.object({ principal: z.string(), name: z.string().nullable(), approved_at: z.string(), expires_at: z.string().nullable() })),
      still_needed: z.number().int().nonnegative().describe('distinct reviewers still needed'),
      expired: z.boolean().describe('enough approvals existed but lapsed: a reviewer must approve again (a commit is refused as expired)'),
      expired_at: z.string().nullable().describe('when the last of those approvals lapsed'),
      rejected_by: z.object({ principal: z.string(), name: z.string().nullable(), decided_at: z.string(), comment: z.string().nullable() }).nullable(),
      who_can_approve: z.string(),
    }),
    approvals: z.array(approvalEntrySchema),
    state: z.enum(['pending', 'approved', 'rejected', 'expired', 'committed']),
    config_drift: z
      .array(configDriftSchema)
      .describe('how the config moved under the plan since it was proposed (empty: it did not); while any, no approval or commit of it is taken: reject it and propose again'),
    proposed_by: z.string(),
    created_at: z.string(),
    expires_at: z.string().nullable().describe("the selection's expiry: the plan dies with it"),
    lookalike_ids: planLookalikesSchema.describe("its selection's ids drawn alike, and the agent's words drawn like a target's id: told on every surface before the plan"),
    review_url: z
      .string()
      .nullable()
      .describe('the review page a person opens: on server.public_url, else where this gateway listens; null where no review pages are served (warrant mcp over stdio, the CLI) and no server.public_url is set: see review_hint'),
    review_hint: z
      .string()
      .nullable()
      .describe('when review_url is null: where a person reviews the plan (the review pages of `warrant serve` on this config, and the address it would be at); null when review_url is a link'),
    compensates: z.string().nullable().describe('the operation this plan compensates'),
    selection: z.object({
      count: z.number().int().nonnegative(),
      digest: z.string(),
      complete: z.boolean(),
      consistent_snapshot: z.boolean(),
      expires_at: z.string(),
      url: z.string(),
      exclusions: z.array(z.object({ rule: z.string(), count: z.number().int().nonnegative() })),
    }),
  })
  .meta({ id: 'Plan' })
export type PlanView = z.infer<typeof planViewSchema>

export const planProposalSchema = planViewSchema
  .extend({ created: z.boolean().describe('false when the same action was already proposed on this selection: that plan is returned') })
  .meta({ id: 'PlanProposal' })
export type PlanProposal = z.infer<typeof planProposalSchema>

export const recordChangeSchema = z
  .object({
    ord: z.number().int().positive(),
    id: z.string(),
    version: z.string().nullable(),
    changes: z.array(z.object({ field: z.string(), before: z.unknown(), after: z.unknown() })),
    skipped: z
      .enum(['fails_precondition', 'no_longer_holds_written', 'unknown'])
      .nullable()
      .optional()
      .describe(
        "whether the write would skip this record, not write it, as things stood at proposal (the summary's `skipped`): `fails_precondition` (fails the action's precondition as frozen), `no_longer_holds_written` (a compensation's target no longer holding what the operation wrote, as read at proposal), `unknown` (cannot be judged: a member frozen without a precondition field, or a compensation's target not read or beyond the list kept), null: written. Its `changes` are then what it would have received",
      ),
  })
  .meta({ id: 'RecordChange' })

/** strict, as every /v1 query: a parameter the route does not take is refused, never dropped */
export const changesQuerySchema = z.strictObject({
  cursor: cursorArgument(4096).optional().describe('next_cursor of the previous page; leave it out for the first'),
  limit: queryInteger({ min: 1, max: 1000 }).default(100),
})

export const changesPageSchema = z
  .object({
    plan_id: z.string(),
    plan_digest: z.string(),
    target_count: z.number().int().nonnegative(),
    // the plan's selection's: a page of changes read alone must not pass a cut-short walk off as every matching record
    ...pageCompleteness,
    changes: z.array(recordChangeSchema),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'PlanChangesPage' })
export type ChangesPage = z.infer<typeof changesPageSchema>

export const approvalResultSchema = z
  .object({
    approval_id: z.string(),
    plan_id: z.string(),
    plan_digest: z.string(),
    selection_id: z.string(),
    selection_digest: z.string(),
    target_count: z.number().int().nonnegative(),
    resource: z.string(),
    environment: z.string(),
    action: z.object({ type: z.string(), params: z.record(z.string(), z.unknown()), precondition: filterSchema }),
    decision: z.enum(['approve', 'reject']),
    approved_by: z.string().nullable().describe('the approving principal (null for a rejection)'),
    approved_by_name: z.string().nullable(),
    approved_at: z.string().nullable(),
    rejected_by: z.string().nullable(),
    decided_at: z.string(),
    expires_at: z.string().nullable().describe('never later than the selection'),
    comment: z.string().nullable(),
    counted: z
      .boolean()
      .describe(
        'false when this reviewer already has a standing approval of this digest: nothing new is recorded, and the answer (HTTP 200) is that approval, with its own id, time, expiry and comment; one reviewer never counts twice',
      ),
    plan_state: z.enum(['pending', 'approved', 'rejected', 'expired', 'committed']),
    still_needed: z.number().int().nonnegative(),
  })
  .meta({ id: 'ApprovalResult' })
export type ApprovalResult = z.infer<typeof approvalResultSchema>
