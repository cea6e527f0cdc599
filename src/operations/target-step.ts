import type { Kysely } from 'kysely'
import { isWarrantError, matchesFilter } from '../contract/index.js'
import { callContext, type Connector, type SourceRecord, type WriteOutcome } from '../connectors/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'
import type { Database, OperationTargetRow } from '../store/index.js'
import { checkRecordFields, checkWriteAnswer, pick, sameVersion, type EffectCheck } from './effect.js'
import { markInFlight, recordOutcome, returnToPending, type TargetOutcome } from './ledger.js'
import type { ObservedOutcome } from './stop-rules.js'
import { NO_TELEMETRY, type Telemetry } from '../telemetry/index.js'
import type { OperationExecution } from './types.js'

/** Everything one target's execution needs; built once per operation. */
export interface TargetContext {
  readonly db: Kysely<Database>
  readonly operationId: string
  readonly owner: string
  readonly connector: Connector
  readonly execution: OperationExecution
  /** The write this target receives (plans.renderWrite); a compensation plan carries a per-target precondition. */
  readonly render: (target: { readonly id: string; readonly version: string | null }) => RenderedWrite
  /** Fields never stored in before/after (the resource's denied fields). */
  readonly hidden: ReadonlySet<string>
  readonly now: () => string
  /** Metrics and spans; absent, nothing is reported. */
  readonly telemetry?: Telemetry
}

/** How one target's turn ended. */
export type StepResult =
  | { readonly kind: 'recorded'; readonly observed: ObservedOutcome }
  /** A 429: the target is pending again (nothing was done) and the whole operation pauses. */
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number; readonly message: string }
  /** The target was not pending, or this executor no longer holds the lease: nothing was sent. */
  | { readonly kind: 'not_claimed' }

const DEFAULT_RETRY_AFTER_SECONDS = 1

/**
 * One target: recorded `in_flight` (durably, under the lease) before any upstream call; re-read and checked
 * against its frozen version and the precondition; written conditionally; the answer checked against the
 * approved effect; the outcome recorded. Failures are results: nothing here throws for an upstream's answer.
 */
export async function executeTarget(ctx: TargetContext, target: OperationTargetRow): Promise<StepResult> {
  if (!(await markInFlight(ctx.db, ctx.operationId, target.ord, ctx.owner, ctx.now()))) return { kind: 'not_claimed' }
  const { plan, selection } = ctx.execution
  const context = { operation_id: ctx.operationId, plan_id: plan.plan_id, selection_id: selection.selection_id, selection_digest: selection.digest }
  const telemetry = ctx.telemetry ?? NO_TELEMETRY
  const resource = plan.resource
  // the target's ordinal, never its id or fields: spans leave the gateway
  const attributes = {
    'warrant.operation_id': ctx.operationId,
    'warrant.plan_id': plan.plan_id,
    'warrant.selection_digest': selection.digest,
    'warrant.resource': resource,
    'warrant.target.ord': target.ord,
  }
  telemetry.add('warrant_executor_targets_in_flight', {}, 1)
  let step: Attempt
  try {
    step = await callContext.run(context, () =>
      telemetry.span('warrant.target.write', attributes, async () => {
        const result = await attempt(ctx, target)
        telemetry.annotate({ 'warrant.target.outcome': result.kind === 'done' ? result.outcome.state : 'rate_limited' })
        return result
      }),
    )
  } finally {
    telemetry.add('warrant_executor_targets_in_flight', {}, -1)
  }
  if (step.kind === 'rate_limited') {
    await returnToPending(ctx.db, ctx.operationId, target.ord, step.message, ctx.now())
    return step
  }
  await recordOutcome(ctx.db, ctx.operationId, target.ord, step.outcome, ctx.now())
  telemetry.add('warrant_operation_targets_total', { resource, outcome: step.outcome.state })
  return { kind: 'recorded', observed: step.observed }
}

type Attempt =
  | { readonly kind: 'done'; readonly outcome: TargetOutcome; readonly observed: ObservedOutcome }
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number; readonly message: string }

async function attempt(ctx: TargetContext, target: OperationTargetRow): Promise<Attempt> {
  const id = target.record_id
  const done = (outcome: TargetOutcome, extra: Partial<ObservedOutcome> = {}): Attempt => ({
    kind: 'done',
    outcome,
    observed: { ord: target.ord, id, state: outcome.state, message: outcome.message ?? outcome.reason ?? undefined, ...extra },
  })

  const current = await rereadOne(ctx.connector, id)
  if (current.kind === 'rate_limited') return current
  if (current.kind === 'failed') return done({ state: 'failed', reason: 'reread_failed', message: current.message, upstream_status: current.status ?? null })
  if (current.kind === 'missing') return done({ state: 'skipped', reason: 'missing', message: `record "${id}" no longer exists upstream; nothing was written` })
  const record = current.record
  const expectedVersion = target.expected_version ?? ''
  if (target.expected_version !== null && !sameVersion(record.version, target.expected_version))
    return done({ state: 'skipped', reason: 'version_changed', message: `record "${id}" is at version ${record.version}, not the ${target.expected_version} the selection froze; nothing was written` })

  let rendered: RenderedWrite
  try {
    rendered = ctx.render({ id, version: target.expected_version })
  } catch (error) {
    return done({ state: 'failed', reason: 'write_refused', message: `the write could not be rendered: ${messageOf(error)}; nothing was sent` })
  }
  const precondition = rendered.precondition ?? ctx.execution.action_config.precondition
  const setFields = Object.keys(rendered.set).filter((f) => !ctx.hidden.has(f))
  const before = pick(record.fields, setFields)
  if (!matchesFilter(record.fields, precondition))
    return done({ state: 'skipped', reason: 'precondition_failed', message: `record "${id}" no longer meets the precondition ${JSON.stringify(precondition)}; nothing was written`, before })

  let outcome: WriteOutcome
  try {
    outcome = await ctx.connector.write({ id, expectedVersion, set: rendered.set, precondition, ...(rendered.http ? { http: rendered.http } : {}) })
  } catch (error) {
    // A connector refuses a malformed request before sending it; anything else may have reached the upstream.
    if (isWarrantError(error) && error.code === 'invalid_request')
      return done({ state: 'failed', reason: 'write_refused', message: `${error.message}; nothing was sent`, before })
    return done({ state: 'unknown', reason: 'upstream_unknown', message: `the write failed without an answer: ${messageOf(error)}`, before })
  }

  const afterFields = [...new Set([...setFields, ...Object.keys(rendered.expect.fields)])].filter((f) => !ctx.hidden.has(f))
  switch (outcome.kind) {
    case 'written': {
      let afterVersion = outcome.record?.version ?? null
      let check: EffectCheck = checkWriteAnswer(
        { status: outcome.status, fields: outcome.record?.fields ?? outcome.body, hasBody: outcome.record !== null || outcome.body !== undefined },
        rendered.expect,
      )
      if (check.kind === 'unverifiable') {
        const reread = await rereadOne(ctx.connector, id)
        if (reread.kind !== 'found')
          return done({ state: 'unknown', reason: 'effect_unverified', upstream_status: outcome.status, message: `the upstream accepted the write (${outcome.status}) without returning the record, and re-reading it failed (${reread.kind === 'missing' ? 'missing' : reread.message})`, before })
        check = checkRecordFields(reread.record.fields, rendered.expect.fields)
        afterVersion = reread.record.version
      }
      if (check.kind === 'contradicted')
        return done(
          { state: 'failed', reason: 'effect_contradicted', upstream_status: outcome.status, message: check.message, before, after: pick(outcome.record?.fields ?? asObject(outcome.body), afterFields) },
          { halt: { rule: 'effect_contradicted', message: `target "${id}": ${check.message}` } },
        )
      return done({ state: 'succeeded', reason: null, upstream_status: outcome.status, before, after: pick(check.kind === 'holds' ? check.values : null, afterFields), after_version: afterVersion })
    }
    case 'conflict':
      return done({ state: 'skipped', reason: outcome.reason, upstream_status: outcome.status ?? null, message: `${outcome.message}; nothing was written`, before })
    case 'rejected':
      return done({ state: 'failed', reason: 'rejected', upstream_status: outcome.status, message: outcome.message, before }, { validation: true })
    case 'unauthorized':
      return done(
        { state: 'failed', reason: 'unauthorized', upstream_status: outcome.status, message: outcome.message, before },
        { halt: { rule: 'authorization_failure', message: `target "${id}": ${outcome.message}` } },
      )
    case 'rate_limited':
      return { kind: 'rate_limited', retryAfterSeconds: outcome.retryAfterSeconds, message: outcome.message }
    case 'unknown':
      return done({ state: 'unknown', reason: 'upstream_unknown', upstream_status: outcome.status ?? null, message: outcome.message, before })
  }
}

type Reread =
  | { readonly kind: 'found'; readonly record: SourceRecord }
  | { readonly kind: 'missing' }
  | { readonly kind: 'failed'; readonly message: string; readonly status?: number }
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number; readonly message: string }

export async function rereadOne(connector: Connector, id: string): Promise<Reread> {
  try {
    const result = await connector.readByIds([id])
    const record = result.records.get(id)
    if (record) return { kind: 'found', record }
    const failure = result.failed.find((f) => f.id === id)
    if (failure?.status === 429) return { kind: 'rate_limited', retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS, message: `re-reading "${id}": ${failure.message}` }
    if (failure) return { kind: 'failed', message: `re-reading "${id}" before the write failed: ${failure.message}; nothing was written`, ...(failure.status === undefined ? {} : { status: failure.status }) }
    return { kind: 'missing' }
  } catch (error) {
    return { kind: 'failed', message: `re-reading "${id}" before the write failed: ${messageOf(error)}; nothing was written` }
  }
}


function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
