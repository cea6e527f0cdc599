import type { Kysely } from 'kysely'
import { callContext, type Connector } from '../connectors/index.js'
import type { Database, OperationTargetRow } from '../store/index.js'
import { checkRecordFields, pick, sameVersion } from './effect.js'
import { refreshFinished, targetsInState } from './ledger.js'
import type { ExecutorDeps } from './executor.js'
import type { OperationExecution, TargetState } from './types.js'

const CHUNK = 100

export interface ReconcileTotals {
  readonly examined: number
  readonly succeeded: number
  readonly failed: number
  readonly still_unknown: number
}

/**
 * Re-reads every `unknown` target (never writes) and records what the upstream shows:
 * the approved effect holds and the version moved → `succeeded`; the version is still the one the selection
 * froze → `failed` (the conditional write did not happen); anything else stays `unknown`, with the reason.
 */
export async function reconcileUnknownTargets(
  deps: { readonly db: Kysely<Database>; readonly connector: Connector; readonly renderWrite: ExecutorDeps['renderWrite']; readonly hidden: ReadonlySet<string>; readonly now: () => string },
  operationId: string,
  execution: OperationExecution,
): Promise<ReconcileTotals> {
  const totals = { examined: 0, succeeded: 0, failed: 0, still_unknown: 0 }
  const context = { operation_id: operationId, plan_id: execution.plan.plan_id, selection_id: execution.selection.selection_id, selection_digest: execution.selection.digest }
  let afterOrd = -1
  for (;;) {
    const targets = await targetsInState(deps.db, operationId, 'unknown', afterOrd, CHUNK)
    if (targets.length === 0) break
    afterOrd = targets[targets.length - 1]!.ord
    const read = await callContext.run(context, () => deps.connector.readByIds(targets.map((t) => t.record_id))).catch((error: unknown) => ({
      records: new Map(),
      missing: [] as string[],
      failed: targets.map((t) => ({ id: t.record_id, message: error instanceof Error ? error.message : String(error) })),
    }))
    const failures = new Map(read.failed.map((f) => [f.id, f.message]))
    for (const target of targets) {
      totals.examined += 1
      const verdict = judge(deps, execution, target, read.records.get(target.record_id), failures.get(target.record_id))
      if (verdict.state === 'unknown') totals.still_unknown += 1
      else if (verdict.state === 'succeeded') totals.succeeded += 1
      else totals.failed += 1
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
        .where('state', '=', 'unknown')
        .execute()
    }
  }
  if (totals.examined > 0) await refreshFinished(deps.db, operationId, deps.now())
  return totals
}

interface Verdict {
  readonly state: TargetState
  readonly reason: string
  readonly message: string | null
  readonly after?: Record<string, unknown> | null
  readonly afterVersion?: string
}

function judge(
  deps: { readonly renderWrite: ExecutorDeps['renderWrite']; readonly hidden: ReadonlySet<string> },
  execution: OperationExecution,
  target: OperationTargetRow,
  record: { readonly version: string; readonly fields: Readonly<Record<string, unknown>> } | undefined,
  failure: string | undefined,
): Verdict {
  const id = target.record_id
  if (failure !== undefined) return { state: 'unknown', reason: 'reconcile_unreadable', message: `reconciliation could not re-read "${id}": ${failure}` }
  if (!record) return { state: 'unknown', reason: 'reconcile_missing', message: `reconciliation found no record "${id}" upstream; whether the write happened cannot be told` }
  const rendered = deps.renderWrite(execution, { id, version: target.expected_version })
  const check = checkRecordFields(record.fields, rendered.expect.fields)
  const moved = target.expected_version === null ? null : !sameVersion(record.version, target.expected_version)
  if (moved === false)
    return { state: 'failed', reason: 'not_applied', message: `reconciliation: "${id}" is still at version ${record.version}, the one the selection froze: the conditional write did not happen` }
  if (check.kind === 'holds') {
    const fields = [...new Set([...Object.keys(rendered.set), ...Object.keys(rendered.expect.fields)])].filter((f) => !deps.hidden.has(f))
    return { state: 'succeeded', reason: 'reconciled', message: null, after: pick(record.fields, fields), afterVersion: record.version }
  }
  const why = check.kind === 'contradicted' ? check.message : 'the effect cannot be checked'
  return { state: 'unknown', reason: 'reconcile_inconclusive', message: `reconciliation: "${id}" changed (version ${record.version}) but does not hold the approved effect: ${why}` }
}
