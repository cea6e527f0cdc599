import type { ActionConfig } from '../config/index.js'
import type { Actor, Filter } from '../contract/index.js'
import type { OperationState, TargetState } from '../store/index.js'
import type { FollowUps } from '../plans/follow-ups.js'
import type { PlanRecord } from '../plans/plan-service.js'
import type { ExclusionRule } from '../selections/selection-service.js'
import type { RateLimitKind } from './wait-words.js'

export type { OperationState, TargetState, RateLimitKind }

/**
 * An operation's states, each named for what happened: `succeeded` every target written; `completed_with_skips`
 * nothing failed, some targets skipped (their precondition or version changed; not written);
 * `completed_with_unknown` nothing failed, some targets have no durable answer (reconcile them);
 * `partially_failed` some written, some failed; `failed` some failed, none written; `halted` a stop rule ended it.
 */
export const OPERATION_STATES = ['pending', 'running', 'succeeded', 'completed_with_skips', 'completed_with_unknown', 'partially_failed', 'failed', 'halted'] as const satisfies readonly OperationState[]
/** States after which an operation's executor has nothing left to do. */
export const FINISHED_STATES: ReadonlySet<OperationState> = new Set<OperationState>(['succeeded', 'completed_with_skips', 'completed_with_unknown', 'partially_failed', 'failed', 'halted'])
export const TARGET_STATES = ['pending', 'in_flight', 'succeeded', 'failed', 'skipped', 'unknown'] as const satisfies readonly TargetState[]

/** Targets per state; their sum is the operation's target count. */
export type TargetCounts = Record<TargetState, number>

/** The stop rules an operation runs under, fixed at commit and stored on it: a config change never alters a running operation. */
export interface StopRules {
  /** An upstream 401/403 halts: the credential or its rights changed, every later write would fail the same way. */
  readonly halt_on_authorization_failure: true
  /**
   * A response whose status, shape or values contradict the approved effect halts at that target; so does a
   * write the upstream only accepted to apply later (202: `effect_pending`), whose effect no answer can check.
   */
  readonly halt_on_contradicted_effect: true
  /** This many targets in a row ending `failed` or `unknown` halt the operation. */
  readonly halt_after_consecutive_errors: number
  /** This many validation refusals (`rejected`, 4xx) in total halt the operation. */
  readonly halt_after_validation_failures: number
  /** A target answered 429 more often than this halts the operation (it stays pending: nothing was done). */
  readonly max_rate_limit_retries: number
  /**
   * A 429 whose Retry-After asks for a longer pause than this (seconds) halts the operation (its target stays
   * pending). Absent on operations committed before it existed: DEFAULT_MAX_RETRY_AFTER_SECONDS applies.
   */
  readonly max_retry_after_seconds?: number
  /** Without a consistent snapshot, each batch's members are re-read before any write of the batch. */
  readonly revalidate_membership_per_batch: boolean
  readonly batch_size: number
  readonly concurrency: number
  readonly max_writes_per_second: number | null
  /**
   * Targets one windowed statement writes (a sql resource's write_window, as its plan bound it; null: the
   * concurrency). Absent (a plan that bound none): the connector's write_window when the run starts, as before.
   */
  readonly write_window?: number | null
}

export const STOP_RULE_NAMES = [
  'authorization_failure',
  'effect_contradicted',
  'effect_pending',
  'effect_unverified',
  'consecutive_errors',
  'validation_failures',
  'rate_limit_retries',
  'retry_after_too_long',
  'membership_changed',
  'membership_unverifiable',
  'upstream_moved',
] as const
export type StopRuleName = (typeof STOP_RULE_NAMES)[number]

/** Why an operation halted: the rule, the target it fired on, and what happened. Later targets stay `pending`. */
export interface HaltReason {
  readonly rule: StopRuleName
  readonly target_id: string | null
  readonly ord: number | null
  readonly message: string
  readonly at: string
}

/**
 * What an operation executes, frozen at commit and stored with it (`operations.execution`): the plan, the
 * action as it was configured and approved, and the selection's selector. A restart, or another instance,
 * executes exactly this, whatever the config file says by then.
 */
export interface OperationExecution {
  readonly route: CommitRoute
  readonly plan: PlanRecord
  readonly action_config: ActionConfig
  readonly selection: {
    readonly selection_id: string
    readonly digest: string
    readonly selector: { readonly filter: Filter; readonly exclude: readonly ExclusionRule[] }
    readonly consistent_snapshot: boolean
  }
  readonly approvals: readonly { readonly principal: string; readonly decided_at: string; readonly expires_at: string | null }[]
  readonly standing_approval: string | null
  /**
   * The kind of connector the resource wrote through at commit: what its "not now" answers are (`RateLimitKind`).
   * Absent on operations committed before it was recorded.
   */
  readonly upstream?: 'sql' | 'http'
}

export type CommitRoute = 'plan_commit' | 'bulk_action'

/** What a commit answers: where the operation and its per-target results are. Never a bare ok. */
export interface CommitReceipt {
  readonly operation_id: string
  readonly status: OperationState
  readonly plan_id: string
  readonly target_count: number
  readonly results_url: string
  readonly operation_url: string
  /** false when the idempotency key named an operation that already existed (a replay). */
  readonly created: boolean
}

/** A Retry-After pause in force on a running operation. */
export interface OperationPause {
  readonly until: string
  /** the upstream's or the connector's own words: a 429 (or 503) and the Retry-After it sent; a database's lock refusal */
  readonly reason: string
  readonly target_id: string | null
  readonly ord: number | null
  readonly since: string
}

export interface OperationView {
  readonly operation_id: string
  readonly plan_id: string
  readonly selection_id: string | null
  readonly selection_digest: string | null
  readonly resource: string | null
  readonly environment: string | null
  readonly action: { readonly type: string; readonly params: Readonly<Record<string, unknown>> } | null
  readonly state: OperationState
  readonly target_count: number
  readonly counts: TargetCounts
  readonly halt_reason: HaltReason | null
  /**
   * how many times the upstream answered "not now" over all targets, in `rate_limit_kind`'s terms (a 429 or a read's
   * 503 with Retry-After; a database's lock not granted in time): each was waited out and asked again
   */
  readonly rate_limit_hits: number
  /** the targets answered "not now" at least once */
  readonly rate_limited_targets: number
  /** what a "not now" is on this operation's upstream (wait-words.ts); null where not known */
  readonly rate_limit_kind: RateLimitKind | null
  /** writes are paused because the upstream said "not now" (a 429 and its Retry-After; a database's lock wait): until when, and why */
  readonly paused: OperationPause | null
  readonly stop_rules: StopRules | null
  readonly created_by: string
  readonly created_at: string
  readonly updated_at: string
  readonly finished_at: string | null
  readonly results_url: string
  readonly operation_url: string
  /** the latest live plan proposing its rest and its compensation, so a reviewer sees one exists and where */
  readonly follow_ups: FollowUps
}

/** One target's outcome, as the ledger holds it. */
export interface TargetResult {
  readonly ord: number
  readonly id: string
  readonly outcome: TargetState
  readonly reason: string | null
  /** the reason in words (target-reasons.ts): refused by the upstream, never sent, sent and rolled back, … */
  readonly reason_text: string | null
  readonly upstream_status: number | null
  readonly error: string | null
  readonly before: Readonly<Record<string, unknown>> | null
  readonly after: Readonly<Record<string, unknown>> | null
  readonly attempts: number
  /** how many times the upstream answered this target "not now", in the operation's `rate_limit_kind` terms */
  readonly rate_limit_hits: number
  readonly updated_at: string
}

export interface ResultsPage {
  readonly operation_id: string
  readonly outcome: TargetState | null
  readonly results: readonly TargetResult[]
  /** null when there is nothing after this page. */
  readonly next_cursor: string | null
  /** what a target's `rate_limit_hits` count (the operation's `rate_limit_kind`) */
  readonly rate_limit_kind: RateLimitKind | null
}

export interface ResultsQuery {
  readonly outcome?: TargetState
  readonly cursor?: string
  readonly limit?: number
}

/** What a reconciliation of the `unknown` targets counted. */
export interface ReconcileTotals {
  readonly examined: number
  readonly succeeded: number
  readonly failed: number
  readonly still_unknown: number
  /** of still_unknown: still at their version, inside the settle window (the write may still land) */
  readonly settling: number
  /** when the last settling target's window ends: reconcile again after it; null when none is settling */
  readonly settles_at: string | null
  /** earlier "not applied" conclusions found wrong, corrected to succeeded: the record now holds the approved effect */
  readonly corrected: number
}

/** What a reconciliation of the `unknown` targets found, with the operation as it stands after it. */
export interface ReconcileReport extends ReconcileTotals {
  readonly operation: OperationView
}

/** The body of the article's `POST /v1/resources/{resource}/bulk-actions`. */
export interface BulkActionRequest {
  readonly selection_id: string
  readonly expected_digest: string
  /** `{type, params: {...}}`, or the article's flat form `{type, reason: "…"}`. */
  readonly action: Readonly<Record<string, unknown>>
}

export interface OperationService {
  /** `POST /v1/plans/{id}/commit`: commits an approved plan under an idempotency key. */
  commitPlan(actor: Actor, planId: string, request: { readonly idempotencyKey?: string | null; readonly expectedDigest?: string | null }): Promise<CommitReceipt>
  /** `POST /v1/resources/{resource}/bulk-actions`: the same commit, named by selection, its digest and the action. */
  commitBulkAction(actor: Actor, resource: string, request: { readonly idempotencyKey?: string | null; readonly body: unknown }): Promise<CommitReceipt>
  get(actor: Actor, operationId: string): Promise<OperationView>
  results(actor: Actor, operationId: string, query?: ResultsQuery): Promise<ResultsPage>
  /** Re-reads every `unknown` target and records what the upstream now shows; never writes upstream. */
  reconcile(actor: Actor, operationId: string): Promise<ReconcileReport>
  /** A new plan restoring each succeeded target's before-value; it needs approval like any plan. */
  proposeCompensation(actor: Actor, operationId: string): Promise<unknown>
  /** "Propose the rest": a new plan of the same action over the finished operation's pending targets at their frozen versions (of a compensation: the before-values restored on the targets it did not finish); it needs approval like any plan. */
  proposeRemainder(actor: Actor, operationId: string): Promise<unknown>
  /** At startup: claims unfinished operations whose lease is free, turns their in-flight targets `unknown`, resumes them; keeps watching for orphaned ones. */
  recover(): Promise<void>
  /** Resolves with the operation once it is finished, or as it stands when `timeoutMs` passes or `signal` aborts (the caller went away). */
  waitFor(operationId: string, timeoutMs: number, signal?: AbortSignal): Promise<OperationView>
  /** Stops the executors of this process: in-flight targets finish and are recorded, leases are released. */
  close(): Promise<void>
}
