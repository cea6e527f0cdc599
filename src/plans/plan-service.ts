import type { HttpWrite } from '../connectors/index.js'
import type { Actor, Filter } from '../contract/index.js'
import type { ActionConfig } from '../config/index.js'
import type { RemainderTarget, SelectionRecord } from '../selections/selection-service.js'
import type { RunLimits } from './run-limits.js'
import type { ApprovalRequestInput, ApprovalResult, ChangesPage, PlanProposal, PlanView } from './schemas.js'

/**
 * Changes to the first version of this interface (additive; old calls compile and behave the same):
 * - `RenderedWrite.precondition`: the filter this target must still meet. For a plan of a configured action
 *   it is the action's precondition; for a compensation plan it is per target ("still holds what the
 *   operation wrote"), so executors should use `rendered.precondition ?? actionConfig.precondition`.
 * - `renderWrite` accepts `version: string | null`.
 * - `assertCommittable`'s third argument may also be `{plan_digest?, selection_digest?}`; a string is
 *   accepted when it equals either the plan digest or the selection digest (the article's bulk-actions form
 *   sends the selection digest).
 * - `proposeCompensation`'s targets may carry `version` (the version the record had after our write); the
 *   compensation selection freezes it, so the executor skips a target someone changed since.
 *   Compensation plans carry their per-target values in `plan.action.params` (`restore`, `expect`, by id),
 *   so `renderWrite(plan, actionConfig, {id, version})` needs nothing else.
 * - `propose` resolves to the `PlanProposal` view; new: `view`, `changes`, `decide` (approvals),
 *   `actionConfigOf`.
 */

/** The canonical action payload a plan and its approval are bound to. */
export interface ActionRequest {
  readonly type: string
  readonly params?: Readonly<Record<string, string | number | boolean>>
}

/** A plan as stored, parsed. */
export interface PlanRecord {
  readonly plan_id: string
  readonly selection_id: string
  readonly resource: string
  readonly environment: string
  /** The canonical action: `{type, params}` with params validated and defaulted. */
  readonly action: { readonly type: string; readonly params: Readonly<Record<string, unknown>> }
  readonly plan_digest: string
  readonly selection_digest: string
  readonly target_count: number
  readonly state: 'pending' | 'approved' | 'rejected' | 'expired' | 'committed'
  readonly proposed_by: string
  readonly created_at: string
  /** Set when this plan compensates an operation. */
  readonly compensates?: string | null
}

/** What one target receives: the fields set, rendered, and the HTTP write if the connector is HTTP. */
export interface RenderedWrite {
  readonly set: Readonly<Record<string, unknown>>
  readonly http?: HttpWrite
  /**
   * Dotted paths of the record this write may change: the set fields (at their paths), the version, what the
   * upstream stamps itself (`write.may_change`). Every other field must be as it was after the write.
   */
  readonly exempt?: readonly string[]
  /** The fields and values the upstream's answer must hold (the approved effect). */
  readonly expect: { readonly status: readonly number[]; readonly fields: Readonly<Record<string, unknown>> }
  /** What the target must still meet at write time (see the note at the top of this file). */
  readonly precondition?: Filter
  /**
   * Values the record must still hold exactly, lists and objects included, else the target is skipped: for a
   * compensation, what the operation wrote (a filter cannot compare a list; this can).
   */
  readonly holds?: Readonly<Record<string, unknown>>
  /**
   * For a compensation, the values it puts back: this target's before-values as the ledger recorded them. Neither its
   * proposal nor its write judges them against the declared types or the column types (the column held them), with
   * the same functions (`setMisfit`, `setStringMisfit`); see `WriteRequest.restores`.
   */
  readonly restores?: Readonly<Record<string, unknown>>
}

/** Everything a commit needs once the plan is proven committable. */
export interface CommittablePlan {
  readonly plan: PlanRecord
  readonly selection: SelectionRecord
  readonly actionConfig: ActionConfig
  /** The approvals that make it committable (empty when a standing approval covers it). */
  readonly approvals: readonly { readonly principal: string; readonly decided_at: string; readonly expires_at: string | null }[]
  readonly standing_approval: string | null
  /** How many distinct approvals it needs (0: a standing approval covers it); the commit checks them again as it records the operation. */
  readonly reviewers_needed: number
  /** The approval TTL the plan is held to now (`policyNow`): the commit judges its approvals again with it as it records the operation. */
  readonly approval_ttl_minutes: number
  /** The stop rules and pacing the plan binds, which its operation runs under; null: proposed before plans bound them (the config's at commit). */
  readonly run_limits: RunLimits | null
}

/** Reads what targets hold now in the fields they were written (`{}`: gone; absent from the map: not read). */
export type CurrentReader = (
  targets: readonly { readonly id: string; readonly source: string | null; readonly after: Readonly<Record<string, unknown>> }[],
) => Promise<ReadonlyMap<string, Readonly<Record<string, unknown>>>>

export interface CompensationTargetInput {
  readonly id: string
  readonly before: Readonly<Record<string, unknown>>
  readonly after: Readonly<Record<string, unknown>>
  /** The version the record had after our write, when known. */
  readonly version?: string | null
  /** The source it was written on (its target's), where it is read and written back alone; null or absent: by id. */
  readonly source?: string | null
  /**
   * What the record holds now in the written fields, read when the compensation is proposed (`{}`: it no
   * longer exists; null or absent: it could not be read). The preview counts it, nothing else uses it.
   */
  readonly current?: Readonly<Record<string, unknown>> | null
}

export interface PlanService {
  propose(actor: Actor, selectionId: string, request: { readonly action: ActionRequest }): Promise<PlanProposal>
  load(actor: Actor, planId: string): Promise<PlanRecord>
  /**
   * Proves the plan can be committed now, or throws the refusal: `not_approved` (403), `expired` (410, the
   * selection or the approval), `digest_mismatch` (409), `selection_incomplete` (409), `conflict` (409, state).
   */
  assertCommittable(actor: Actor, planId: string, expectedDigest?: string | { readonly plan_digest?: string; readonly selection_digest?: string }): Promise<CommittablePlan>
  /** The write one target receives under a plan's action (templates rendered with params, id and set values). */
  renderWrite(plan: PlanRecord, actionConfig: ActionConfig, target: { readonly id: string; readonly version: string | null }): RenderedWrite
  /** The plan that exactly matches (selection, canonical action), for the article's bulk-actions form. */
  findBySelectionAndAction(actor: Actor, selectionId: string, action: ActionRequest): Promise<PlanRecord | null>
  /** Marks the plan committed (once): a second call throws `conflict`. */
  markCommitted(planId: string): Promise<void>
  /**
   * A compensation plan: restores each listed target's before-value, precondition "still holds what we wrote".
   * `unknownTargets`: the operation's targets that ended unknown (their write may have landed), which it does not
   * restore; the plan says how many (params `unknown_not_restored`, and its description).
   */
  proposeCompensation(actor: Actor, operationId: string, source: PlanRecord, targets: readonly CompensationTargetInput[], unknownTargets?: number): Promise<PlanProposal>
  /**
   * Refuses, before anything is read from the upstream, a compensation `proposeCompensation` would refuse for where
   * or through what the operation wrote: 409 `conflict` (environment changed; `reason: upstream_moved`; a write that
   * cannot restore, `assertRestorable`), 403 `forbidden` (the action written through is outside the token's scope).
   */
  assertCompensable(actor: Actor, operationId: string, source: PlanRecord): Promise<void>
  /**
   * "Propose the rest": a plan of `source`'s action, params and environment over exactly `targets` (the operation's
   * pending ones, at their frozen versions), on a selection of its own; asked again, the same open (or committed) plan.
   * 409 `conflict`: no target, the environment or upstream moved, the action redefined or gone, a compensation's run.
   * `readCurrent`: how the rest of a compensation reads its targets' written fields for its preview (as
   * `CompensationTargetInput.current`), called once nothing refuses it and no open plan answers it; absent: not read.
   */
  proposeRemainder(actor: Actor, operationId: string, source: PlanRecord, targets: readonly RemainderTarget[], readCurrent?: CurrentReader): Promise<PlanProposal>
  /** The plan with its approval state (who approved, until when, who is still needed). */
  view(actor: Actor, planId: string): Promise<PlanView>
  /**
   * Records the config drift of every plan a commit could still take, under the config this process runs, as a view
   * records it: run when a gateway opens, so a drift nobody viewed still voids the approvals
   * given before it. Answers the plans found drifted and those that could not be judged.
   */
  recordOpenPlansMoves(): Promise<{ readonly drifted: string[]; readonly unjudged: { readonly plan_id: string; readonly error: string }[] }>
  /** Per-record before → after, a page at a time, in the selection's order. */
  changes(actor: Actor, planId: string, query: { readonly cursor?: string; readonly limit?: number }): Promise<ChangesPage>
  /** A reviewer's decision on the exact plan digest they saw. */
  decide(actor: Actor, planId: string, request: ApprovalRequestInput): Promise<ApprovalResult>
  /** The action config a plan executes: the resource's configured action, or the synthesized compensation. */
  actionConfigOf(plan: PlanRecord): ActionConfig
}
