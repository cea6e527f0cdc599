import type { OperationTargetRow } from '../store/index.js'
import { NO_TELEMETRY } from '../telemetry/index.js'
import { rateLimitedError, rateLimitedWriteSent, recordOutcome, releaseUnstarted, returnToPending } from './ledger.js'
import type { Attempt, StepResult, TargetContext } from './target-step.js'

/**
 * The attempt's end in the ledger: the outcome recorded, or (a 429) the target pending again. The one place an
 * answer's status becomes the row's `upstream_status`: a database answers none, so on a sql resource the codes its
 * connector chose to classify its own answers (200 written, 422/409/403/500/503 for refusals) stay the executor's,
 * and the row records null rather than show them as what "the upstream" said.
 */
export function settle(ctx: TargetContext, target: OperationTargetRow, step: Attempt): StepResult {
  const sql = ctx.connector.kind === 'sql'
  if (step.kind === 'lease_ended') return { kind: 'lease_ended', returned: releaseUnstarted(ctx.db, ctx.operationId, [target.ord], ctx.now()) }
  if (step.kind === 'rate_limited') {
    // not awaited here: the caller pauses every later write first, then waits for the target to be pending again
    const sent = step.writeSent === true || rateLimitedWriteSent(target)
    const again = { ...target, reason: 'rate_limited', error: rateLimitedError(step.message, sent) }
    const { writeSent: _, ...rest } = step
    return { ...rest, again, returned: returnToPending(ctx.db, ctx.operationId, target.ord, step.message, ctx.now(), sql ? null : step.status, sent) }
  }
  const committed = recordOutcome(ctx.db, ctx.operationId, target.ord, { ...step.outcome, upstream_status: sql ? null : step.outcome.upstream_status }, ctx.now())
  ;(ctx.telemetry ?? NO_TELEMETRY).add('warrant_operation_targets_total', { resource: ctx.execution.plan.resource, outcome: step.outcome.state })
  return { kind: 'recorded', observed: step.observed, committed }
}
