import { WarrantError, type Actor } from '../contract/index.js'
import type { CurrentReader, PlanService } from '../plans/plan-service.js'
import type { RemainderTarget } from '../selections/selection-service.js'
import type { OperationRow, Store } from '../store/index.js'
import { countTargets, targetsInState } from './ledger.js'
import type { OperationExecution } from './types.js'
import { isFinished } from './views.js'

/**
 * "Propose the rest" of a finished operation: its `pending` targets (never sent), with the versions and sources its
 * ledger froze, handed to `PlanService.proposeRemainder`. Refused (409) while it runs, and while a target is
 * `in_flight` or `unknown`: its write may have landed, so it is neither "the rest" nor done until reconciled. `readCurrent`
 * reads the targets of a compensation's rest for its preview (see `PlanService.proposeRemainder`).
 */
export async function proposeRemainder(
  store: Store,
  plans: Pick<PlanService, 'proposeRemainder'>,
  actor: Actor,
  operation: { readonly row: OperationRow; readonly execution: OperationExecution },
  readCurrent?: CurrentReader,
): Promise<unknown> {
  const { row, execution } = operation
  const id = row.id
  if (!isFinished(row)) throw new WarrantError('conflict', `operation "${id}" is still ${row.state}; propose the rest once it has stopped`, { state: row.state })
  const counts = await countTargets(store.db, id)
  const unsettled = counts.unknown + counts.in_flight
  if (unsettled > 0)
    throw new WarrantError(
      'conflict',
      `operation "${id}" has ${unsettled} target${unsettled === 1 ? '' : 's'} whose write may have landed (unknown): reconcile them first (POST /v1/operations/${id}/reconcile, warrant reconcile ${id}), then propose the rest; no remainder is proposed while it is not known what is left`,
      { reason: 'unknown_targets', operation_id: id, unknown: unsettled },
    )
  if (counts.pending === 0) throw new WarrantError('conflict', `operation "${id}" has no pending target (state ${row.state}): there is nothing left to propose`, { operation_id: id, state: row.state })
  const targets: RemainderTarget[] = []
  for (let afterOrd = -1; ; ) {
    const chunk = await targetsInState(store.db, id, 'pending', afterOrd, 1000)
    if (chunk.length === 0) break
    afterOrd = chunk[chunk.length - 1]!.ord
    for (const t of chunk) targets.push({ ord: t.ord, id: t.record_id, version: t.expected_version, source: t.source })
  }
  return plans.proposeRemainder(actor, id, execution.plan, targets, readCurrent)
}
