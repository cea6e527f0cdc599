import type { Kysely } from 'kysely'
import type { FieldTypeNames } from '../contract/index.js'
import { callContext, type Connector } from '../connectors/index.js'
import type { Database, OperationTargetRow } from '../store/index.js'
import { checkRecordFields, pick, sameVersion, versionText } from './effect.js'
import { refreshFinished, targetsInState, unknownAtHalt } from './ledger.js'
import { sourcesOf } from './target-source.js'
import type { ExecutorDeps } from './executor.js'
import type { HaltReason, OperationExecution, ReconcileTotals, TargetState } from './types.js'
import { rateLimitKindFor } from './wait-words.js'

const CHUNK = 100

export interface ReconcileDeps {
  readonly db: Kysely<Database>
  readonly connector: Connector
  readonly renderWrite: ExecutorDeps['renderWrite']
  readonly hidden: ReadonlySet<string>
  /** The resource's declared field types: an effect read back is compared as its fields are declared. */
  readonly fieldTypes: FieldTypeNames
  readonly now: () => string
  /** `execution.reconcile_settle_seconds`, in ms */
  readonly settleMs: number
}

/** The reason a reconciliation gives a target it judged not applied; only these are ever re-examined. */
export const NOT_APPLIED = 'not_applied'

/**
 * Re-reads targets (never writes) and records what the upstream shows.
 *
 * `unknown` targets: the approved effect holds and the version moved → `succeeded`; the version moved but the
 * record does not hold the effect → stays `unknown` (someone else wrote: ours may or may not have landed
 * first). The version is still the one the selection froze and the effect is there → stays `unknown` (a version that
 * does not move on writes proves nothing). Still at the frozen version without the effect → `failed` (not applied), but only once the settle
 * window has passed since the gateway stopped waiting for the write: a timed-out request can still be held
 * and applied by the upstream (or a proxy) after the gateway gave up, so before that it stays `unknown`,
 * reason `reconcile_settling`, and the report says when to reconcile again (`settles_at`).
 *
 * "Not applied" remains a conclusion drawn from a quiet window, not a proof. So reconciliation also re-reads
 * the targets it concluded `not_applied` and corrects one to `succeeded` (reason `applied_late`) when the
 * record now holds the approved effect at a version other than the frozen one, and no later operation of this
 * gateway has sent a write to that record (its write would explain the change as well as ours). Nothing else
 * reverses a conclusion: a record that changed in some other way is no evidence that our write landed, and a
 * `succeeded` target is never downgraded (a later change does not undo that the effect was seen).
 */
export async function reconcileUnknownTargets(deps: ReconcileDeps, operationId: string, execution: OperationExecution): Promise<ReconcileTotals> {
  const totals = { examined: 0, succeeded: 0, failed: 0, still_unknown: 0, settling: 0, settles_at: null as string | null, corrected: 0 }
  const context = { operation_id: operationId, plan_id: execution.plan.plan_id, selection_id: execution.selection.selection_id, selection_digest: execution.selection.digest }
  const now = deps.now()
  const readAll = (targets: readonly OperationTargetRow[]) =>
    callContext
      .run(context, () => deps.connector.readByIds(targets.map((t) => t.record_id), undefined, sourcesOf(targets)))
      .catch((error: unknown) => ({
        records: new Map(),
        missing: [] as string[],
        failed: targets.map((t) => ({ id: t.record_id, message: error instanceof Error ? error.message : String(error) })),
      }))

  const operation = await deps.db.selectFrom('operations').select(['created_at', 'state', 'halt_reason']).where('id', '=', operationId).executeTakeFirstOrThrow()
  const createdAt = operation.created_at
  // halted by an earlier version, which left a target whose write was sent and answered 429 pending for good
  if (operation.state === 'halted' && operation.halt_reason !== null) await unknownAtHalt(deps.db, operationId, JSON.parse(operation.halt_reason) as HaltReason, now, rateLimitKindFor(execution, () => deps.connector.kind))
  for (let afterOrd = -1; ; ) {
    const targets = await targetsInState(deps.db, operationId, 'unknown', afterOrd, CHUNK)
    if (targets.length === 0) break
    afterOrd = targets[targets.length - 1]!.ord
    const read = await readAll(targets)
    const failures = new Map(read.failed.map((f) => [f.id, f.message]))
    for (const target of targets) {
      totals.examined += 1
      let verdict = judge(deps, execution, target, read.records.get(target.record_id), failures.get(target.record_id), now)
      // the effect at a new version is ours only if no later write of this gateway explains it as well
      const later = verdict.state === 'succeeded' ? await laterWriteTo(deps.db, operationId, execution.plan.resource, createdAt, target.record_id) : null
      if (later !== null)
        verdict = {
          state: 'unknown',
          reason: 'reconcile_inconclusive',
          message: `reconciliation: "${target.record_id}" holds the approved effect at version ${verdict.afterVersion}, but operation ${later} has sent a write to it since: that write explains the change as well as ours, which may or may not have landed`,
        }
      if (verdict.state === 'unknown') totals.still_unknown += 1
      else if (verdict.state === 'succeeded') totals.succeeded += 1
      else totals.failed += 1
      if (verdict.settlesAt !== undefined) {
        totals.settling += 1
        if (totals.settles_at === null || verdict.settlesAt > totals.settles_at) totals.settles_at = verdict.settlesAt
      }
      await record(deps, operationId, target, 'unknown', verdict)
    }
  }

  for (let afterOrd = -1; ; ) {
    const page = await targetsInState(deps.db, operationId, 'failed', afterOrd, CHUNK)
    if (page.length === 0) break
    afterOrd = page[page.length - 1]!.ord
    const concluded = page.filter((t) => t.reason === NOT_APPLIED)
    if (concluded.length === 0) continue
    const read = await readAll(concluded)
    for (const target of concluded) {
      const found = read.records.get(target.record_id)
      if (!found || !appliedNow(deps, execution, target, found)) continue
      if ((await laterWriteTo(deps.db, operationId, execution.plan.resource, createdAt, target.record_id)) !== null) continue
      totals.corrected += 1
      await record(deps, operationId, target, 'failed', {
        state: 'succeeded',
        reason: 'applied_late',
        message: `reconciliation had concluded at ${target.updated_at} that the write did not happen; "${target.record_id}" now holds the approved effect at version ${found.version}: the write was applied late`,
        after: pick(found.fields, effectFields(deps, execution, target)),
        afterVersion: found.version,
      })
    }
  }
  if (totals.examined > 0 || totals.corrected > 0) await refreshFinished(deps.db, operationId, now)
  return totals
}

interface Verdict {
  readonly state: TargetState
  readonly reason: string
  readonly message: string | null
  readonly after?: Record<string, unknown> | null
  readonly afterVersion?: string
  /** a target left unknown inside its settle window: when the window ends */
  readonly settlesAt?: string
}

/** The verdict, written only if the target is still in the state it was read in (`unknown_since` is kept). */
async function record(deps: ReconcileDeps, operationId: string, target: OperationTargetRow, from: TargetState, verdict: Verdict): Promise<void> {
  await deps.db
    .updateTable('operation_targets')
    .set({
      state: verdict.state,
      reason: verdict.reason,
      error: verdict.message ? JSON.stringify({ message: verdict.message }) : null,
      ...(verdict.after ? { after: JSON.stringify(verdict.after), after_version: verdict.afterVersion ?? null } : {}),
      updated_at: deps.now(),
    })
    .where('operation_id', '=', operationId)
    .where('ord', '=', target.ord)
    .where('state', '=', from)
    .where('reason', target.reason === null ? 'is' : '=', target.reason)
    .execute()
}

function judge(
  deps: ReconcileDeps,
  execution: OperationExecution,
  target: OperationTargetRow,
  record: { readonly version: string; readonly fields: Readonly<Record<string, unknown>> } | undefined,
  failure: string | undefined,
  now: string,
): Verdict {
  const id = target.record_id
  if (failure !== undefined) return { state: 'unknown', reason: 'reconcile_unreadable', message: `reconciliation could not re-read "${id}": ${failure}` }
  if (!record) return { state: 'unknown', reason: 'reconcile_missing', message: `reconciliation found no record "${id}" upstream; whether the write happened cannot be told` }
  const rendered = deps.renderWrite(execution, { id, version: target.expected_version })
  const check = checkRecordFields(record.fields, rendered.expect.fields, deps.fieldTypes)
  const moved = target.expected_version === null ? null : !sameVersion(record.version, target.expected_version)
  // Still at the frozen version yet holding the approved values: the write landed on an upstream whose version
  // does not move on writes (the executor's `unmoved` verdict), or the values were there already. Either way the
  // version proves nothing, and "not applied" would be a conclusion the record contradicts.
  if (moved === false && check.kind === 'holds')
    return {
      state: 'unknown',
      reason: 'reconcile_inconclusive',
      message: `reconciliation: "${id}" holds the approved effect, but still at ${versionText(record.version)}, the one the selection froze: a version that does not move on writes cannot tell whether the write landed`,
    }
  if (moved === false) {
    const since = target.unknown_since ?? target.updated_at
    const settlesAt = new Date(Date.parse(since) + deps.settleMs).toISOString()
    if (now < settlesAt)
      return {
        state: 'unknown',
        reason: 'reconcile_settling',
        message: `reconciliation: "${id}" is still at ${versionText(record.version)}, but the gateway stopped waiting for its write only at ${since} and an upstream may still apply it until ${settlesAt} (execution.reconcile_settle_seconds): reconcile after that to conclude`,
        settlesAt,
      }
    return {
      state: 'failed',
      reason: NOT_APPLIED,
      message: `reconciliation: "${id}" is still at ${versionText(record.version)}, the one the selection froze, past the settle window (the gateway stopped waiting at ${since}): the conditional write did not happen`,
    }
  }
  if (check.kind === 'holds') return { state: 'succeeded', reason: 'reconciled', message: null, after: pick(record.fields, effectFields(deps, execution, target)), afterVersion: record.version }
  const why = check.kind === 'contradicted' ? check.message : 'the effect cannot be checked'
  return { state: 'unknown', reason: 'reconcile_inconclusive', message: `reconciliation: "${id}" changed (version ${record.version}) but does not hold the approved effect: ${why}` }
}

/** The record holds the approved effect at a version other than the frozen one. */
function appliedNow(deps: ReconcileDeps, execution: OperationExecution, target: OperationTargetRow, record: { readonly version: string; readonly fields: Readonly<Record<string, unknown>> }): boolean {
  if (target.expected_version === null || sameVersion(record.version, target.expected_version)) return false
  const rendered = deps.renderWrite(execution, { id: target.record_id, version: target.expected_version })
  return checkRecordFields(record.fields, rendered.expect.fields, deps.fieldTypes).kind === 'holds'
}

/** The fields a succeeded target's `after` keeps: those written and those expected, never a hidden one. */
function effectFields(deps: ReconcileDeps, execution: OperationExecution, target: OperationTargetRow): string[] {
  const rendered = deps.renderWrite(execution, { id: target.record_id, version: target.expected_version })
  return [...new Set([...Object.keys(rendered.set), ...Object.keys(rendered.expect.fields)])].filter((f) => !deps.hidden.has(f))
}

/**
 * Another operation (a recovery, a second change, a compensation) that may have sent a write to the same
 * record of the same resource since this one was committed, or null: a target of it past `pending`, not skipped,
 * last changed after this operation's creation.
 */
async function laterWriteTo(db: Kysely<Database>, operationId: string, resource: string, createdAt: string, recordId: string): Promise<string | null> {
  const row = await db
    .selectFrom('operation_targets as t')
    .innerJoin('operations as o', 'o.id', 't.operation_id')
    .innerJoin('plans as p', 'p.id', 'o.plan_id')
    .select('t.operation_id')
    .where('t.record_id', '=', recordId)
    .where('t.operation_id', '!=', operationId)
    .where('p.resource', '=', resource)
    .where('t.updated_at', '>=', createdAt)
    .where('t.state', 'not in', ['pending', 'skipped'])
    .executeTakeFirst()
  return row?.operation_id ?? null
}
