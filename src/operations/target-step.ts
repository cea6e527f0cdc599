import type { Kysely } from 'kysely'
import { type FieldTypeNames, isWarrantError, matchesFilter, quotedKey } from '../contract/index.js'
import { callContext, type Connector, type SourceRecord, type WriteOutcome, type WriteRequest } from '../connectors/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'
import type { Database, OperationTargetRow } from '../store/index.js'
import { checkRecordFields, checkStatus, checkUntouched, pick, sameValue, sameVersion, versionText, type UntouchedCheck } from './effect.js'
import { markInFlight, rateLimitedWriteSent, type TargetOutcome } from './ledger.js'
import { settle } from './settle-attempt.js'
import type { ObservedOutcome } from './stop-rules.js'
import { NO_TELEMETRY, type Telemetry } from '../telemetry/index.js'
import type { OperationExecution } from './types.js'
import { DEFAULT_RETRY_AFTER_SECONDS, rereadOf, rereadOne, type Reread } from './reread.js'
import { sourcesOf } from './target-source.js'
import { enforcedFor } from './version-proof.js'
import { changedAtSameVersion } from './unversioned-change.js'
import { rateLimitKindFor, waitWords, type RateLimitKind } from './wait-words.js'
import { judgeRecord, unmoved, unmovedVerdict, verifyAccepted, verifyWritten } from './write-verdict.js'
import { isConflictAnswer, judgeConflict } from './conflict-verdict.js'

export { rereadOne, type Reread }

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
  /** The resource's declared field types (timestamps compare by instant). */
  readonly fieldTypes: FieldTypeNames
  readonly now: () => string
  /** Metrics and spans; absent, nothing is reported. */
  readonly telemetry?: Telemetry
  /**
   * The connector's own write refuses a stale version (a conditional UPDATE). A record read with its window or
   * batch then needs no second read before its write: one changed since fails the conditional write.
   */
  readonly versionEnforced?: boolean
  /**
   * The sources on which a write probe proved, for this action, that the upstream refuses a stale version
   * (version-proof): the targets frozen from one of them are, like `versionEnforced`, not read a second time.
   */
  readonly provenSources?: ReadonlySet<string>
  /**
   * Whether this executor's lease still has its margin (`KeptLease.holds`), asked right before each write is sent:
   * the re-read before it can take up to the upstream's timeout_ms, past the lease's end. Absent: always.
   */
  readonly leaseHolds?: () => boolean
}

/** How one target's turn ended. */
export type StepResult =
  /**
   * The answer is known; `committed` settles once the outcome is in the ledger (true: recorded; false: the
   * target was no longer in flight). The caller need not wait for it before the next target: until it commits,
   * the target stays `in_flight`, which a crash turns into `unknown`, as for a crash during the write.
   */
  | { readonly kind: 'recorded'; readonly observed: ObservedOutcome; readonly committed: Promise<boolean> }
  /**
   * A 429: the whole operation pauses; the target is pending again once `returned` settles. `again`: the target as
   * the ledger now holds it, to be tried again (it remembers a write sent and answered 429: `rateLimitedWriteSent`).
   */
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number; readonly message: string; readonly defaulted?: true; readonly returned: Promise<boolean>; readonly again: OperationTargetRow }
  /** The target was not pending, or this executor no longer holds the lease: nothing was sent. */
  | { readonly kind: 'not_claimed' }
  /**
   * The lease had lost its margin when the write was to be sent: nothing was sent, and the target is pending again
   * once `returned` settles (unless another instance took it over meanwhile); the executor stops.
   */
  | { readonly kind: 'lease_ended'; readonly returned: Promise<void> }


/**
 * One target: recorded `in_flight` (durably, under the lease) before any upstream call; re-read and checked
 * against its frozen version and the precondition; written conditionally; the answer checked against the
 * approved effect; the outcome recorded. Failures are results: nothing here throws for an upstream's answer.
 */
export async function executeTarget(ctx: TargetContext, target: OperationTargetRow, claimed = false, read?: Reread): Promise<StepResult> {
  // `claimed`: the caller already committed this target `in_flight` (with a window of others, see the executor);
  // `read`: the record as read with its window, only where the write enforces the version (readWindow)
  if (!claimed && !(await markInFlight(ctx.db, ctx.operationId, target.ord, ctx.owner, ctx.now()))) return { kind: 'not_claimed' }
  const { plan, selection } = ctx.execution
  const context = callContextOf(ctx)
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
        const result = await attempt(ctx, target, read)
        telemetry.annotate({ 'warrant.target.outcome': result.kind === 'done' ? result.outcome.state : result.kind })
        return result
      }),
    )
  } finally {
    telemetry.add('warrant_executor_targets_in_flight', {}, -1)
  }
  return settle(ctx, target, step)
}

/** How one target's attempt ended, before the ledger records it. */
export type Attempt =
  | { readonly kind: 'done'; readonly outcome: TargetOutcome; readonly observed: ObservedOutcome }
  /**
   * `defaulted`: the upstream named no usable wait; `retryAfterSeconds` is the connector's default. `status`: the
   * upstream's (429, 503). `writeSent`: the write itself was answered so (not a read before it), so it may have landed.
   */
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number; readonly message: string; readonly defaulted?: true; readonly status?: number; readonly writeSent?: true }
  /** nothing sent: the lease lost its margin first (see `TargetContext.leaseHolds`) */
  | { readonly kind: 'lease_ended' }

export const LEASE_ENDED: Attempt = { kind: 'lease_ended' }

/** Whether a write may be sent now: the lease still has its margin. */
export function leaseHolds(ctx: TargetContext): boolean {
  return ctx.leaseHolds?.() !== false
}

export function callContextOf(ctx: TargetContext) {
  const { plan, selection } = ctx.execution
  return { operation_id: ctx.operationId, plan_id: plan.plan_id, selection_id: selection.selection_id, selection_digest: selection.digest }
}

/**
 * A window's records in one read, of the targets whose write enforces the version (`enforcedFor`): the per-target
 * re-read would only repeat it, since a record changed since this read fails its conditional write. Null when
 * none does, or the read failed as a whole (each target is then re-read alone, as usual).
 */
export async function readWindow(ctx: TargetContext, window: readonly OperationTargetRow[]): Promise<Map<string, Reread> | null> {
  // a target of a source no probe vouches for is re-read alone, right before its write
  const targets = window.filter((t) => enforcedFor(ctx, t))
  if (targets.length === 0) return null
  const ids = targets.map((t) => t.record_id)
  try {
    const telemetry = ctx.telemetry ?? NO_TELEMETRY
    const { plan, selection } = ctx.execution
    const attributes = { 'warrant.operation_id': ctx.operationId, 'warrant.plan_id': plan.plan_id, 'warrant.selection_digest': selection.digest, 'warrant.window.targets': ids.length }
    // its own span under the operation's: the read serves the window's targets, not one of them
    const result = await callContext.run(callContextOf(ctx), () => telemetry.span('warrant.window.read', attributes, () => ctx.connector.readByIds(ids, undefined, sourcesOf(targets))))
    return new Map(ids.map((id) => [id, rereadOf(result, id, 'before')]))
  } catch {
    return null
  }
}

/** A target checked and ready to be written: the request, and what judging its answer needs. */
export interface PreparedWrite {
  readonly kind: 'write'
  readonly request: WriteRequest
  readonly record: SourceRecord
  readonly rendered: RenderedWrite
  readonly before: Readonly<Record<string, unknown>> | null
  readonly setFields: readonly string[]
  readonly done: (outcome: TargetOutcome, extra?: Partial<ObservedOutcome>) => Attempt
  /** a write of this target was sent before and answered 429 (`rateLimitedWriteSent`): it may have landed */
  readonly earlierWrite: boolean
}

/** How a write call ended: the connector's answer, or what it threw. */
export type Sent = { readonly outcome: WriteOutcome } | { readonly error: unknown }

async function attempt(ctx: TargetContext, target: OperationTargetRow, read?: Reread): Promise<Attempt> {
  const prepared = await prepare(ctx, target, read)
  if (prepared.kind !== 'write') return prepared
  if (!leaseHolds(ctx)) return LEASE_ENDED
  let sent: Sent
  try {
    sent = { outcome: await ctx.connector.write(prepared.request) }
  } catch (error) {
    sent = { error }
  }
  return judge(ctx, prepared, sent)
}

/**
 * Everything before the write: the record (read with its window, or re-read now) against its frozen version,
 * the write rendered, the precondition. An answer here means nothing is to be sent.
 */
export async function prepare(ctx: TargetContext, target: OperationTargetRow, read?: Reread): Promise<Attempt | PreparedWrite> {
  const id = target.record_id
  const done = (outcome: TargetOutcome, extra: Partial<ObservedOutcome> = {}): Attempt => ({
    kind: 'done',
    outcome,
    observed: { ord: target.ord, id, state: outcome.state, message: outcome.message ?? outcome.reason ?? undefined, ...extra },
  })

  // A replacing write sends the record back whole, so it is built only from a record read alone: a batch or
  // window answer is proven whole by one sampled record (read-batch.ts), and a list view may shorten the others
  const current = read !== undefined && ctx.execution.action_config.write?.style !== 'replace' ? read : await rereadOne(ctx.connector, id, 'before', target.source)
  if (current.kind === 'rate_limited') return current
  // `before` says what this attempt read: nothing, when the read failed or found no record. Left out, the row would
  // keep the values as frozen, which the results and the operation page show as what the record held at write time.
  if (current.kind === 'failed') return done({ state: 'failed', reason: 'reread_failed', message: current.message, upstream_status: current.status ?? null, before: null })
  if (current.kind === 'missing') return done({ state: 'skipped', reason: 'missing', message: `record "${id}" no longer exists upstream; nothing was written`, before: null })
  const record = current.record
  const expectedVersion = target.expected_version ?? ''
  let rendered: RenderedWrite
  try {
    rendered = ctx.render({ id, version: target.expected_version })
  } catch (error) {
    return done({ state: 'failed', reason: 'write_refused', message: `the write could not be rendered: ${messageOf(error)}; nothing was sent` })
  }
  // A write of it answered 429 earlier may have landed all the same (an upstream that applies it, then refuses the
  // rate): the record moved to the approved values is then not "changed by another writer, nothing written", nor,
  // checked first, a compensation's record that "no longer holds what was written" (our own undo restored it)
  const earlierWrite = rateLimitedWriteSent(target)
  if (target.expected_version !== null && !sameVersion(record.version, target.expected_version) && earlierWrite && checkRecordFields(record.fields, rendered.expect.fields, ctx.fieldTypes).kind === 'holds')
    return done(rateLimitedApplied(id, target.expected_version, record.version, rateLimitKindFor(ctx.execution, () => ctx.connector.kind)))
  const setFields = Object.keys(rendered.set).filter((f) => !ctx.hidden.has(f))
  const before = pick(record.fields, setFields)
  // Checked before the version so the reason says what matters (a compensation: the data moved on).
  const moved = rendered.holds ? Object.keys(rendered.holds).find((f) => !ctx.hidden.has(f) && !sameValue(record.fields[f], rendered.holds![f])) : undefined
  if (moved !== undefined)
    return done({
      state: 'skipped',
      reason: 'precondition_failed',
      message: `record "${id}" no longer holds what was written: "${moved}" is ${show(record.fields[moved])}, not ${show(rendered.holds![moved])}; nothing was written`,
      before,
    })
  if (target.expected_version !== null && !sameVersion(record.version, target.expected_version))
    return done({ state: 'skipped', reason: 'version_changed', message: `record "${id}" is at ${versionText(record.version)}, not at ${versionText(target.expected_version)} as the selection froze it; nothing was written`, before })
  const precondition = rendered.precondition ?? ctx.execution.action_config.precondition
  if (!matchesFilter(record.fields, precondition, ctx.fieldTypes))
    return done({ state: 'skipped', reason: 'precondition_failed', message: `record "${id}" no longer meets the precondition ${JSON.stringify(precondition)}; nothing was written`, before })
  // a precondition no longer met says more than a changed field, so it is told first
  const unversioned = target.expected_version === null ? undefined : changedAtSameVersion(id, record, target.before, rendered, ctx.fieldTypes)
  if (unversioned !== undefined) return done({ state: 'skipped', reason: 'version_changed', message: unversioned, before })

  // a compensation's recorded before-values are written back as the record held them (`WriteRequest.restores`)
  const request: WriteRequest = { id, expectedVersion, set: rendered.set, precondition, current: record, ...(rendered.exempt ? { mayChange: rendered.exempt } : {}), ...(rendered.http ? { http: rendered.http } : {}), ...(target.source === null ? {} : { source: target.source }), ...(rendered.restores ? { restores: rendered.restores } : {}) }
  return { kind: 'write', request, record, rendered, before, setFields, done, earlierWrite }
}

/**
 * A target whose earlier write was answered 429, found at a new version holding the approved values (on its retry's
 * read, or on the re-read after the retry was refused for that version): that write may have landed all the same.
 */
export function rateLimitedApplied(id: string, from: string, now: string, kind: RateLimitKind | null): TargetOutcome {
  const words = waitWords(kind).write
  return {
    state: 'unknown',
    reason: 'rate_limited_applied',
    message: `a write of record "${id}" ${words.was}, yet the record is now at ${versionText(now)}, not ${versionText(from)}, holding the approved values: that write may have been applied ${words.despite} (or another writer set the same values); it is not sent again`,
  }
}

/** The write's answer judged against the approved effect. */
export async function judge(ctx: TargetContext, prepared: PreparedWrite, sent: Sent): Promise<Attempt> {
  const { request, record, rendered, before, setFields, done } = prepared
  const id = request.id
  if ('error' in sent) {
    const error = sent.error
    // A connector refuses a malformed request before sending it; anything else may have reached the upstream.
    if (isWarrantError(error) && error.code === 'invalid_request')
      return done({ state: 'failed', reason: 'write_refused', message: `${error.message}; nothing was sent`, before })
    return done({ state: 'unknown', reason: 'upstream_unknown', message: `the write failed without an answer: ${messageOf(error)}`, before })
  }
  const outcome = sent.outcome
  const afterFields = [...new Set([...setFields, ...Object.keys(rendered.expect.fields)])].filter((f) => !ctx.hidden.has(f))
  if (outcome.kind === 'written' || (outcome.kind === 'unknown' && outcome.accepted)) {
    const status = outcome.status ?? null
    const unexpected = outcome.kind === 'written' ? checkStatus(outcome.status, rendered.expect) : null
    if (unexpected) return judgeUnexpected(ctx, prepared, unexpected.message, status, afterFields)
    if (outcome.kind === 'written' && outcome.otherRecordId !== undefined) return judgeOtherRecord(ctx, prepared, outcome.otherRecordId, status, afterFields)
    const verdict = outcome.kind === 'written' ? await verifyWritten(ctx, { id, source: prepared.request.source, before: record, rendered, outcome }) : await verifyAccepted(ctx, { id, source: prepared.request.source, before: record, rendered })
    if (verdict.kind === 'unverified')
      return done({ state: 'unknown', reason: 'effect_unverified', upstream_status: status, message: verdict.message, before })
    // Halts: a lagging read or a version that does not move would leave every later target as unprovable.
    if (verdict.kind === 'unmoved')
      return done({ state: 'unknown', reason: 'effect_unverified', upstream_status: status, message: verdict.message, before }, { halt: { rule: 'effect_unverified', message: `target "${id}": ${verdict.message}` } })
    // Halts: against an upstream that applies writes later, no further target's effect could be checked either.
    if (verdict.kind === 'pending') {
      const message = `${outcome.kind === 'unknown' ? outcome.message : ''}; ${verdict.message}: reconcile the operation once the upstream has applied it`
      return done({ state: 'unknown', reason: 'effect_pending', upstream_status: status, message, before }, { halt: { rule: 'effect_pending', message: `target "${id}": ${message}` } })
    }
    if (verdict.kind === 'contradicted')
      return done(
        { state: 'failed', reason: 'effect_contradicted', upstream_status: status, message: verdict.message, before, after: pick(verdict.after, afterFields), after_version: verdict.version ?? null },
        { halt: { rule: 'effect_contradicted', message: `target "${id}": ${verdict.message}` } },
      )
    return done({ state: 'succeeded', reason: null, upstream_status: status, before, after: pick(verdict.after.fields, afterFields), after_version: verdict.version })
  }
  switch (outcome.kind) {
    case 'conflict':
      // the upstream's own 409/412: only the record re-read says whether it changed (conflict-verdict.ts)
      if (isConflictAnswer(outcome)) return judgeConflict(ctx, prepared, outcome)
      return done({ state: 'skipped', reason: outcome.reason, upstream_status: outcome.status ?? null, message: `${outcome.message}; nothing was written`, before })
    case 'rejected':
      return done({ state: 'failed', reason: 'rejected', upstream_status: outcome.status, message: outcome.message, before }, { validation: true })
    case 'unauthorized':
      return done(
        { state: 'failed', reason: 'unauthorized', upstream_status: outcome.status, message: outcome.message, before },
        { halt: { rule: 'authorization_failure', message: `target "${id}": ${outcome.message}` } },
      )
    case 'not_sent':
      // like any failure it extends the consecutive-error streak; it is no validation refusal (nothing was judged)
      return done({ state: 'failed', reason: 'not_sent', upstream_status: null, message: outcome.message, before })
    case 'rolled_back':
      // sent, never committed: nothing was written, and nothing was refused either (no validation failure)
      return done({ state: 'failed', reason: 'rolled_back', upstream_status: null, message: outcome.message, before })
    case 'rate_limited':
      // the write was sent and may have landed (an upstream that applies it and answers 429), unless the upstream
      // proved it was not (a database's lock refusal, rolled back): a halt before the retry then leaves it pending
      return {
        kind: 'rate_limited',
        retryAfterSeconds: outcome.retryAfterSeconds,
        message: outcome.message,
        status: outcome.status,
        ...(outcome.notApplied ? {} : { writeSent: true as const }),
        ...(outcome.defaulted ? { defaulted: true as const } : {}),
      }
    case 'unknown':
      return done({ state: 'unknown', reason: 'upstream_unknown', upstream_status: outcome.status ?? null, message: outcome.message, before })
  }
}

/**
 * A success status the action does not expect (200 where it declared 204, a 207): the upstream does not behave
 * as approved, so its answer is not taken as the record and the operation halts at this target. But the write
 * may well have landed, and a target recorded `failed` is never compensated: the record is re-read and the
 * target recorded as it shows (the approved effect: `succeeded`, reason `unexpected_status`; another change:
 * `failed`; not readable: `unknown`), so the ledger says what the upstream holds.
 */
async function judgeUnexpected(ctx: TargetContext, prepared: PreparedWrite, unexpected: string, status: number | null, afterFields: readonly string[]): Promise<Attempt> {
  const { request, record, rendered, before, done } = prepared
  const id = request.id
  const halt = (message: string) => ({ halt: { rule: 'effect_contradicted' as const, message: `target "${id}": ${message}` } })
  const reread = await rereadOne(ctx.connector, id, 'after', request.source)
  if (reread.kind !== 'found') {
    const message = `${unexpected}, and re-reading the record failed (${reread.kind === 'missing' ? 'it no longer exists' : reread.message}): the write may or may not have happened`
    return done({ state: 'unknown', reason: 'effect_unverified', upstream_status: status, message, before }, halt(message))
  }
  const after = reread.record
  const check = judgeRecord(ctx, record, rendered, after)
  if (unmoved(record, after.version)) {
    const message = `${unexpected}; ${unmovedVerdict(after.version, check.kind === 'holds', `${status}`).message}`
    return done({ state: 'unknown', reason: 'effect_unverified', upstream_status: status, message, before }, halt(message))
  }
  if (check.kind === 'holds') {
    const message = `${unexpected}; re-read, the record holds the approved effect at version ${after.version}`
    return done({ state: 'succeeded', reason: 'unexpected_status', upstream_status: status, message, before, after: pick(after.fields, afterFields), after_version: after.version }, halt(message))
  }
  const message = `${unexpected}; re-read, ${check.message}`
  return done({ state: 'failed', reason: 'effect_contradicted', upstream_status: status, message, before, after: pick(after.fields, afterFields), after_version: after.version }, halt(message))
}

/**
 * A write answered with another record than the target: the answer proves nothing of the target, and the upstream
 * does not answer as approved, so the operation halts. But the write may have landed on the target (an action
 * endpoint answering a receipt with its own id, an upstream echoing the wrong document), and a target recorded
 * `failed` is never compensated: the target is re-read, and where it holds the approved effect at a new version it
 * is `succeeded` (reason `other_record_answer`); otherwise `failed` (effect_contradicted) as the answer says (on a
 * sql resource, the statement wrote the row stored under that other id, never the target).
 */
async function judgeOtherRecord(ctx: TargetContext, prepared: PreparedWrite, otherId: string, status: number | null, afterFields: readonly string[]): Promise<Attempt> {
  const { request, record, rendered, before, done } = prepared
  const answered = `the upstream answered with record ${quotedKey(otherId)}, not the target "${request.id}"`
  const halt = (message: string) => ({ halt: { rule: 'effect_contradicted' as const, message: `target "${request.id}": ${message}` } })
  const reread = await rereadOne(ctx.connector, request.id, 'after', request.source)
  if (reread.kind === 'found' && !unmoved(record, reread.record.version) && judgeRecord(ctx, record, rendered, reread.record).kind === 'holds') {
    const after = reread.record
    const message = `${answered}; re-read, the target holds the approved effect at version ${after.version}`
    return done({ state: 'succeeded', reason: 'other_record_answer', upstream_status: status, message, before, after: pick(after.fields, afterFields), after_version: after.version }, halt(message))
  }
  return done({ state: 'failed', reason: 'effect_contradicted', upstream_status: status, message: answered, before, after: null }, halt(answered))
}

function show(value: unknown): string {
  return value === undefined ? 'absent' : (JSON.stringify(value) ?? String(value))
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
