import { SYSTEM_ACTOR } from '../contract/index.js'
import type { RunRecorder } from '../operations/index.js'
import type { PlanProposal, PlanService } from '../plans/index.js'
import type { NotificationEvent, PlanFacts } from './events.js'

type Emit = (event: NotificationEvent | Promise<NotificationEvent | null>) => void

export interface ObserverLog {
  error(fields: object, message: string): void
}

const facts = (p: { plan_id: string; resource: string; environment: string; target_count: number; action: { type: string } }): PlanFacts => ({
  plan_id: p.plan_id,
  resource: p.resource,
  environment: p.environment,
  action: p.action.type,
  target_count: p.target_count,
})

/**
 * The plan service, telling `emit` when a plan starts waiting for review and when a reviewer decides. Every
 * surface (HTTP, MCP, CLI, review pages) and the compensation path go through it, so none is missed; the
 * service itself stays free of delivery code. A notification problem never fails the call.
 *
 * @example const plans = observePlans(createPlanService(...), notifications.emit, log)
 */
export function observePlans(plans: PlanService, emit: Emit, log: ObserverLog): PlanService {
  const safely = (build: () => NotificationEvent | null) => {
    try {
      const event = build()
      if (event) emit(event)
    } catch (error) {
      log.error({ err: error }, 'could not build a notification')
    }
  }
  const awaiting = (proposal: PlanProposal, proposer: string): NotificationEvent | null =>
    proposal.created && proposal.state === 'pending'
      ? { kind: 'plan.awaiting_review', plan: facts(proposal), reviewers_needed: proposal.approval.reviewers_needed, proposed_by: proposer, expires_at: proposal.expires_at }
      : null
  return {
    ...plans,
    async propose(actor, selectionId, request) {
      const proposal = await plans.propose(actor, selectionId, request)
      safely(() => awaiting(proposal, actor.name))
      return proposal
    },
    async proposeCompensation(actor, operationId, source, targets, unknownTargets) {
      const proposal = await plans.proposeCompensation(actor, operationId, source, targets, unknownTargets)
      safely(() => awaiting(proposal, actor.name))
      return proposal
    },
    async proposeRemainder(actor, operationId, source, targets, readCurrent) {
      const proposal = await plans.proposeRemainder(actor, operationId, source, targets, readCurrent)
      safely(() => awaiting(proposal, actor.name))
      return proposal
    },
    async decide(actor, planId, request) {
      const result = await plans.decide(actor, planId, request)
      // A repeated approval by the same principal (from any of its tokens) changes nothing: it is not news.
      if (result.decision === 'approve' && !result.counted) return result
      safely(() => ({
        kind: 'plan.decided',
        plan: facts({ ...result, action: result.action }),
        decision: result.decision,
        decided_by: actor.name,
        plan_state: result.plan_state,
        still_needed: result.still_needed,
      }))
      return result
    },
  }
}

/**
 * The executor's run-level recorder (the audit log), also telling `emit` when an operation finishes or halts:
 * the executor records exactly one such event per operation, when it ends.
 */
export function observeOperationEnds(recorder: RunRecorder, plans: PlanService, emit: Emit, log: ObserverLog): RunRecorder {
  return {
    record(event) {
      const recorded = recorder.record(event)
      const kind = event.action === 'operation.finished' || event.action === 'operation.halted' ? event.action : null
      if (kind && event.plan_id && event.operation_id) {
        const planId = event.plan_id
        const operationId = event.operation_id
        const summary = (event.summary ?? {}) as { state?: unknown; counts?: unknown; halt_reason?: { rule?: unknown } | null }
        // Handed over as a promise: the notifier's close waits for it (a CLI closes as soon as the operation ends).
        emit(
          plans
            .load(SYSTEM_ACTOR, planId)
            .then((plan): NotificationEvent => ({
              kind,
              plan: facts(plan),
              operation_id: operationId,
              state: typeof summary.state === 'string' ? summary.state : kind === 'operation.halted' ? 'halted' : 'finished',
              counts: summary.counts && typeof summary.counts === 'object' ? (summary.counts as Record<string, number>) : {},
              halt_rule: typeof summary.halt_reason?.rule === 'string' ? summary.halt_reason.rule : null,
            }))
            .catch((error: unknown) => {
              log.error({ err: error, operation_id: operationId }, 'could not notify the end of an operation')
              return null
            }),
        )
      }
      return recorded
    },
  }
}
