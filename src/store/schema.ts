import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/**
 * A JSON document stored as text on both dialects: write `JSON.stringify(value)`, read `JSON.parse(text)`.
 * Text rather than `jsonb` keeps the bytes a digest was computed over exactly as they were written.
 */
export type JsonText = string

/**
 * An ISO-8601 UTC timestamp as produced by `Date.prototype.toISOString()` (`2025-01-31T12:00:00.000Z`).
 * Every writer uses that one fixed-width form, so comparing these strings compares the instants.
 */
export type IsoTimestamp = string

/** A boolean as an integer, 0 or 1: SQLite has no boolean type. */
export type Flag = 0 | 1

export type SelectionState = 'building' | 'frozen' | 'expired' | 'failed'
export type PlanState = 'pending' | 'approved' | 'rejected' | 'expired' | 'committed'
export type ApprovalDecision = 'approve' | 'reject'
export type OperationState = 'pending' | 'running' | 'succeeded' | 'completed_with_skips' | 'completed_with_unknown' | 'partially_failed' | 'failed' | 'halted'
export type TargetState = 'pending' | 'in_flight' | 'succeeded' | 'failed' | 'skipped' | 'unknown'
export type AuditLevel = 'run' | 'call'
export type PrincipalRole = 'agent' | 'reviewer' | 'admin'

/** A frozen selection. Immutable once `state` is `frozen`, except for `state` itself (expiry). */
export interface SelectionsTable {
  id: string
  resource: string
  environment: string
  /** the filter the selection was built from */
  selector: JsonText
  /** the review field list */
  fields: JsonText
  count: number
  digest: string
  complete: Flag
  /** { incomplete_reasons, warnings, continuation, scope } */
  completeness: JsonText
  consistent_snapshot: Flag
  /** records removed by each exclusion rule: { [rule]: count } */
  exclusions: JsonText
  groups: JsonText
  created_by: string | null
  created_at: IsoTimestamp
  expires_at: IsoTimestamp
  state: SelectionState
  /** JSON: `{kind: 'recovery', selection_id}` or `{kind: 'compensation', operation_id, plan_id}`; null for a plain selection (0002) */
  origin: JsonText | null
  /** the lease owner (host:pid:random:machine) of the process that built it; null on rows from before 0008 */
  builder: string | null
  /** while `building`: the builder is known alive until then (it renews it); null once frozen or failed (0008) */
  lease_until: IsoTimestamp | null
  /** why a `failed` selection never finished (its builder died, its lease ran out); null otherwise (0008) */
  failure: string | null
  /** `principal U+001F key` when the request carried an idempotency key; null otherwise, and once the build failed (0009) */
  idempotency_key: string | null
  /** the digest of the canonical request the key came with; a retry with another request is refused (0009) */
  request_fingerprint: string | null
  /** `upstreamDigestOf` its resource when frozen: where its members were read from; null on rows from before 0010 */
  upstream_digest: string | null
  /** JSON `StoredLookalikes`: the ids drawn alike, found as the members were written; null on rows from before 0013 until first viewed */
  lookalike_ids: JsonText | null
  /** when retention deleted its members and exclusions (0021); the row itself is kept. Null: all still stored */
  members_pruned_at: IsoTimestamp | null
}

/** One member of a selection. Key (selection_id, ord): a page is an index seek on `ord`, never an OFFSET. */
export interface SelectionMembersTable {
  selection_id: string
  ord: number
  record_id: string
  /** ETag, revision or updated_at as read; null when the upstream has no version */
  version: string | null
  fields: JsonText
  /** the connector source the record was read from (0002); null when not read from a source */
  source: string | null
}

/** A record an exclusion rule removed from a selection. Key (selection_id, rule, ord). */
export interface SelectionExclusionsTable {
  selection_id: string
  rule: string
  ord: number
  record_id: string
  version: string | null
  fields: JsonText
  /** the connector source the record was read from (0002) */
  source: string | null
}

export interface PlansTable {
  id: string
  selection_id: string
  resource: string
  environment: string
  /** canonical JSON of the action */
  action: JsonText
  action_type: string
  plan_digest: string
  selection_digest: string
  target_count: number
  changes_summary: JsonText
  /** the approval policy outcome */
  policy: JsonText
  state: PlanState
  proposed_by: string
  created_at: IsoTimestamp
  expires_at: IsoTimestamp | null
  /** the operation this plan compensates (0002); null for a plan of a configured action */
  compensates: string | null
  /** (0018) when the config was last seen moved under it: approvals decided then or before no longer count; null: never seen */
  config_drifted_at: IsoTimestamp | null
  /** (0018) the drift codes seen then, JSON; null with config_drifted_at */
  config_drift: JsonText | null
}

/** A decision on one plan digest; never reused for another digest. */
export interface ApprovalsTable {
  id: string
  plan_id: string
  plan_digest: string
  decision: ApprovalDecision
  principal: string
  comment: string | null
  decided_at: IsoTimestamp
  /** null for a rejection, which does not expire */
  expires_at: IsoTimestamp | null
  /** the token the decision was made with (0011): once it is revoked, the approval no longer counts; null before 0011 */
  token_id: string | null
  /** (0019) the expiry it was given with, kept when a shortened TTL first cut it; null: never cut */
  ttl_given_until: IsoTimestamp | null
}

/** The commit of an approved plan; one per idempotency key. */
export interface OperationsTable {
  id: string
  plan_id: string
  idempotency_key: string
  request_fingerprint: string
  state: OperationState
  stop_rules: JsonText
  halt_reason: JsonText | null
  counts: JsonText
  lease_owner: string | null
  lease_expires_at: IsoTimestamp | null
  /** what the operation executes, frozen at commit (plan, action config, selector); see migration 0003 */
  execution: JsonText | null
  /** a Retry-After pause in force: until when, and why (JSON: message, target_id, ord, since); see migration 0007 */
  paused_until: IsoTimestamp | null
  pause_reason: JsonText | null
  created_by: string
  created_at: IsoTimestamp
  updated_at: IsoTimestamp
  finished_at: IsoTimestamp | null
}

/** The per-target ledger of an operation. `in_flight` is written before the upstream call. */
export interface OperationTargetsTable {
  operation_id: string
  ord: number
  record_id: string
  expected_version: string | null
  state: TargetState
  before: JsonText | null
  after: JsonText | null
  /** the version the record had right after our write, when the upstream said; see migration 0003 */
  after_version: string | null
  upstream_status: number | null
  error: JsonText | null
  reason: string | null
  attempts: Generated<number>
  updated_at: IsoTimestamp
  /**
   * When the target became `unknown`: when the executor stopped waiting for its write (a timeout, a lost
   * answer) or declared it interrupted. Reconciliation judges "not applied" only a settle window past it (0005).
   */
  unknown_since: IsoTimestamp | null
  /** the upstream's "not now" answers (429, a read's 503 with Retry-After) so far: `max_rate_limit_retries` bounds them (0015) */
  rate_limit_hits: Generated<number>
  /** the source its selection member was read from, which it is re-read and written on alone; null: by id across the sources (0017) */
  source: string | null
}

/** The append-only, hash-chained audit log. `seq` is assigned by the writer, not by the database. */
export interface AuditEventsTable {
  seq: number
  level: AuditLevel
  at: IsoTimestamp
  /** null for the gateway's own events (expiry sweeps, startup) */
  principal: string | null
  surface: string
  action: string
  summary: JsonText
  selection_id: string | null
  plan_id: string | null
  operation_id: string | null
  target_id: string | null
  details: JsonText | null
  prev_hash: string
  hash: string
}

/** A person or a named service; it may hold several tokens. */
export interface PrincipalsTable {
  id: string
  /** unique (0006): one name, one principal, so two approvals under one name are one reviewer */
  name: string
  role: PrincipalRole
  scopes: JsonText
  created_at: IsoTimestamp
  disabled_at: IsoTimestamp | null
  /**
   * (0014) the time of its most recent disable, kept when it is enabled again: approvals decided before it, its own
   * or on plans it proposed, stay void for good. Written only by a disable.
   */
  last_disabled_at: ColumnType<IsoTimestamp | null, IsoTimestamp | null | undefined, IsoTimestamp | null>
}

/** API tokens; only a hash of the token is stored. */
export interface TokensTable {
  id: string
  principal_id: string
  token_hash: string
  created_at: IsoTimestamp
  expires_at: IsoTimestamp | null
  revoked_at: IsoTimestamp | null
  last_used_at: IsoTimestamp | null
}

/** Server secrets and settings, e.g. the cursor-signing key. */
export interface KvTable {
  key: string
  value: string
}

/** A signed-in review-page session (0004). Only hashes of the session id and of the bearer token are kept. */
export interface ReviewSessionsTable {
  /** sha256 of the session id the cookie carries */
  id_hash: string
  principal: string
  /** sha256 of the bearer token the session was opened with: revoking the token ends the session */
  token_hash: string
  /** the session's CSRF token, echoed by every form */
  csrf: string
  created_at: IsoTimestamp
  last_seen_at: IsoTimestamp
  expires_at: IsoTimestamp
}

export type WebhookDeliveryState = 'pending' | 'delivered' | 'failed'

/** One event sent (or being sent) to one webhook, with its attempts (0004). Never holds record data. */
export interface WebhookDeliveriesTable {
  id: string
  /** sha256 of the webhook URL: the URL itself may be a secret (Slack) and is not stored */
  webhook_key: string
  /** the webhook's name, or its scheme and host */
  webhook_label: string
  event: string
  plan_id: string | null
  operation_id: string | null
  /** the JSON body, as sent */
  payload: JsonText
  state: WebhookDeliveryState
  attempts: Generated<number>
  last_status: number | null
  last_error: string | null
  created_at: IsoTimestamp
  updated_at: IsoTimestamp
  /** when the next attempt is due (the database's time on PostgreSQL); null once delivered or failed */
  next_attempt_at: IsoTimestamp | null
  /** until when `lease_owner` holds it (the database's time on PostgreSQL); a pending row past it and due is resumed by another */
  lease_until: IsoTimestamp | null
  /** the notifier holding the lease; null when released (migration 0012: null on older rows) */
  lease_owner: string | null
}

/** Every table of the store, for `Kysely<Database>`. */
export interface Database {
  selections: SelectionsTable
  selection_members: SelectionMembersTable
  selection_exclusions: SelectionExclusionsTable
  plans: PlansTable
  approvals: ApprovalsTable
  operations: OperationsTable
  operation_targets: OperationTargetsTable
  audit_events: AuditEventsTable
  principals: PrincipalsTable
  tokens: TokensTable
  kv: KvTable
  review_sessions: ReviewSessionsTable
  webhook_deliveries: WebhookDeliveriesTable
}

export type SelectionRow = Selectable<SelectionsTable>
export type NewSelectionRow = Insertable<SelectionsTable>
export type SelectionUpdate = Updateable<SelectionsTable>
export type SelectionMemberRow = Selectable<SelectionMembersTable>
export type NewSelectionMemberRow = Insertable<SelectionMembersTable>
export type SelectionExclusionRow = Selectable<SelectionExclusionsTable>
export type NewSelectionExclusionRow = Insertable<SelectionExclusionsTable>
export type PlanRow = Selectable<PlansTable>
export type NewPlanRow = Insertable<PlansTable>
export type PlanUpdate = Updateable<PlansTable>
export type ApprovalRow = Selectable<ApprovalsTable>
export type NewApprovalRow = Insertable<ApprovalsTable>
export type OperationRow = Selectable<OperationsTable>
export type NewOperationRow = Insertable<OperationsTable>
export type OperationUpdate = Updateable<OperationsTable>
export type OperationTargetRow = Selectable<OperationTargetsTable>
export type NewOperationTargetRow = Insertable<OperationTargetsTable>
export type OperationTargetUpdate = Updateable<OperationTargetsTable>
export type AuditEventRow = Selectable<AuditEventsTable>
export type NewAuditEventRow = Insertable<AuditEventsTable>
export type PrincipalRow = Selectable<PrincipalsTable>
export type NewPrincipalRow = Insertable<PrincipalsTable>
export type TokenRow = Selectable<TokensTable>
export type NewTokenRow = Insertable<TokensTable>
export type KvRow = Selectable<KvTable>
export type ReviewSessionRow = Selectable<ReviewSessionsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
