import { z } from 'zod'
import { followUpsSchema } from '../plans/index.js'
import { OPERATION_STATES, STOP_RULE_NAMES, TARGET_STATES } from './types.js'

/** Response shapes, for OpenAPI and for clients that validate what they read. */

const operationStateSchema = z
  .enum(OPERATION_STATES)
  .describe(
    'succeeded: every target written; completed_with_skips: nothing failed, some skipped (not written: precondition or version changed); completed_with_unknown: nothing failed, some without a durable answer (reconcile them); partially_failed: some written, some failed; failed: some failed, none written; halted: a stop rule ended it, later targets stay pending',
  )
const targetStateSchema = z.enum(TARGET_STATES)

export const commitReceiptSchema = z
  .object({
    operation_id: z.string(),
    status: operationStateSchema,
    plan_id: z.string(),
    target_count: z.number().int(),
    results_url: z.string().describe('per-target outcomes, paged'),
    operation_url: z.string(),
    created: z.boolean().describe('false when the Idempotency-Key named an existing operation (a replay)'),
  })
  .meta({ id: 'CommitReceipt' })

export const haltReasonSchema = z
  .object({
    rule: z.enum(STOP_RULE_NAMES),
    target_id: z.string().nullable(),
    ord: z.number().int().nullable(),
    message: z.string(),
    at: z.string(),
  })
  .meta({ id: 'HaltReason' })

export const stopRulesSchema = z
  .object({
    halt_on_authorization_failure: z.literal(true),
    halt_on_contradicted_effect: z.literal(true),
    halt_after_consecutive_errors: z.number().int(),
    halt_after_validation_failures: z.number().int(),
    max_rate_limit_retries: z.number().int(),
    max_retry_after_seconds: z.number().int().optional(),
    revalidate_membership_per_batch: z.boolean(),
    batch_size: z.number().int(),
    concurrency: z.number().int(),
    max_writes_per_second: z.number().nullable(),
    write_window: z
      .number()
      .int()
      .nullable()
      .optional()
      .describe("targets one windowed UPDATE writes, as the plan bound the sql resource's write_window (null: the concurrency); absent: the connector's at run time"),
  })
  .meta({ id: 'StopRules' })

const countsSchema = z.object(Object.fromEntries(TARGET_STATES.map((s) => [s, z.number().int()])) as Record<(typeof TARGET_STATES)[number], z.ZodNumber>)

const rateLimitKindSchema = z
  .enum(['http', 'database_lock'])
  .nullable()
  .describe('what a "not now" (rate_limit_hits, paused) is on this operation\'s upstream, recorded at commit: http, the upstream answered 429 (or a read\'s 503 with Retry-After) and the wait it named was honoured; database_lock, a sql database did not grant a lock in time (a lock wait timeout, a deadlock, SQLite busy), rolled the write back (nothing written) and the connector retried it after a pause: no 429 or Retry-After exists there; null, not known (an operation committed before this was recorded, on a resource no longer configured)')

export const operationViewSchema = z
  .object({
    operation_id: z.string(),
    plan_id: z.string(),
    selection_id: z.string().nullable(),
    selection_digest: z.string().nullable(),
    resource: z.string().nullable(),
    environment: z.string().nullable(),
    action: z.object({ type: z.string(), params: z.record(z.string(), z.unknown()) }).nullable(),
    state: operationStateSchema,
    target_count: z.number().int(),
    counts: countsSchema,
    halt_reason: haltReasonSchema.nullable(),
    rate_limit_hits: z
      .number()
      .int()
      .describe('how many times the upstream answered "not now", over all targets, as rate_limit_kind says (an http upstream\'s 429, or a read\'s 503 with Retry-After; a sql database\'s lock not granted in time): each answer was waited out and the target asked again, or the operation halted (rate_limit_retries); why an operation took longer than its rate'),
    rate_limited_targets: z.number().int().describe('the targets the upstream answered "not now" at least once; per target: rate_limit_hits in the results'),
    rate_limit_kind: rateLimitKindSchema,
    paused: z
      .object({
        until: z.string().describe('no write is sent before this instant'),
        reason: z.string().describe("what said \"not now\", in its own words: an http upstream's 429 (or 503) and its Retry-After; a sql database's lock refusal as the connector classified it (rolled back, nothing written)"),
        target_id: z.string().nullable(),
        ord: z.number().int().nullable(),
        since: z.string(),
      })
      .nullable()
      .describe('a running operation waiting because its upstream said "not now" (an http Retry-After, at most stop_rules.max_retry_after_seconds; a sql database\'s lock wait, retried after the connector\'s pause); null when writes are going on or it has finished'),
    stop_rules: stopRulesSchema.nullable(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
    results_url: z.string(),
    operation_url: z.string(),
    follow_ups: followUpsSchema,
  })
  .meta({ id: 'Operation' })

export const targetResultSchema = z
  .object({
    ord: z.number().int(),
    id: z.string(),
    outcome: targetStateSchema,
    reason: z.string().nullable(),
    reason_text: z
      .string()
      .nullable()
      .describe('the reason in words: refused by the upstream (rejected), never sent (not_sent), sent and rolled back (rolled_back), …; whether anything was written'),
    upstream_status: z.number().int().nullable(),
    error: z.string().nullable(),
    before: z.record(z.string(), z.unknown()).nullable(),
    after: z.record(z.string(), z.unknown()).nullable(),
    attempts: z.number().int(),
    rate_limit_hits: z
      .number()
      .int()
      .describe('how many times the upstream answered this target "not now", as the page\'s rate_limit_kind says (a 429, or a read\'s 503 with Retry-After; a database\'s lock not granted in time); each was waited out and asked again, up to stop_rules.max_rate_limit_retries'),
    updated_at: z.string(),
  })
  .meta({ id: 'TargetResult' })

export const resultsPageSchema = z
  .object({
    operation_id: z.string(),
    outcome: targetStateSchema.nullable(),
    results: z.array(targetResultSchema),
    next_cursor: z.string().nullable(),
    rate_limit_kind: rateLimitKindSchema,
  })
  .meta({ id: 'ResultsPage' })

export const reconcileReportSchema = z
  .object({
    operation: operationViewSchema,
    examined: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    still_unknown: z.number().int(),
    settling: z
      .number()
      .int()
      .describe('of still_unknown: still at the frozen version, but the gateway stopped waiting for the write less than execution.reconcile_settle_seconds ago, so it may still land'),
    settles_at: z.string().nullable().describe('when the last settling target can be concluded: reconcile again after it; null when none is settling'),
    corrected: z.number().int().describe('targets an earlier reconciliation judged not applied that now hold the approved effect: recorded succeeded (applied_late)'),
  })
  .meta({ id: 'ReconcileReport' })
