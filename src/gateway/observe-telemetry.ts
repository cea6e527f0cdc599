import { sql } from 'kysely'
import type { AuditLog } from '../audit/index.js'
import type { UpstreamCall } from '../connectors/index.js'
import type { PlanService } from '../plans/index.js'
import type { Store } from '../store/index.js'
import type { StoreCounts, Telemetry } from '../telemetry/index.js'

const UNFINISHED = ['pending', 'running'] as const

/** The gauges read from the store at each scrape: true for every instance that shares it. */
export function storeCounts(store: Store): StoreCounts {
  const byState = (rows: { state: string; n: number | string | bigint }[]) => rows.map((r) => ({ labels: { state: r.state }, count: Number(r.n) }))
  return {
    warrant_plans: async () => byState(await store.db.selectFrom('plans').select(['state', sql<number>`count(*)`.as('n')]).groupBy('state').execute()),
    // targets of unfinished operations only: the progress of what runs now, not the whole history
    warrant_operation_targets: async () =>
      byState(
        await store.db
          .selectFrom('operation_targets')
          .innerJoin('operations', 'operations.id', 'operation_targets.operation_id')
          .where('operations.state', 'in', [...UNFINISHED])
          .select(['operation_targets.state as state', sql<number>`count(*)`.as('n')])
          .groupBy('operation_targets.state')
          .execute(),
      ),
    // every delivery ever recorded: an alert on a rise of the failed count finds a reviewer who was never told
    warrant_webhook_deliveries: async () =>
      (
        await store.db
          .selectFrom('webhook_deliveries')
          .select(['webhook_label', 'state', sql<number>`count(*)`.as('n')])
          .groupBy(['webhook_label', 'state'])
          .execute()
      ).map((r) => ({ labels: { webhook: r.webhook_label, state: r.state }, count: Number(r.n) })),
  }
}

/** Every upstream call: counted by source, method, status and outcome; its latency; a span under the active one. */
export function reportUpstreamCall(telemetry: Telemetry, call: UpstreamCall): void {
  const method = call.method.toUpperCase()
  telemetry.add('warrant_upstream_calls_total', { source: call.source, method, status: call.status === null ? 'none' : String(call.status), outcome: call.outcome })
  telemetry.observe('warrant_upstream_call_duration_seconds', { source: call.source, method }, call.durationMs / 1000)
  const failed = !['ok', 'written', 'session_opened', 'conflict'].includes(call.outcome)
  telemetry.recordSpan(`warrant.upstream ${method}`, { 'warrant.source': call.source, 'warrant.upstream.method': method, 'warrant.upstream.outcome': call.outcome, 'http.response.status_code': call.status ?? undefined }, call.durationMs, failed)
}

/** The audit log, counting the rows it appends and the verifications it runs. */
export function observeAudit(audit: AuditLog, telemetry: Telemetry): AuditLog {
  return {
    ...audit,
    record: async (event) => {
      const entry = await audit.record(event)
      telemetry.add('warrant_audit_rows_total', { level: 'run' })
      return entry
    },
    recordCall: (call) => {
      audit.recordCall(call)
      telemetry.add('warrant_audit_rows_total', { level: 'call' })
    },
    verify: async (options) => {
      try {
        const result = await audit.verify(options)
        telemetry.add('warrant_audit_verify_total', { result: result.status === 'ok_with_acknowledged_breaks' ? 'acknowledged' : result.status })
        return result
      } catch (error) {
        telemetry.add('warrant_audit_verify_total', { result: 'error' })
        throw error
      }
    },
  }
}

/** The plan service, counting reviewers' decisions by resource and decision. */
export function observeDecisions(plans: PlanService, telemetry: Telemetry): PlanService {
  return {
    ...plans,
    async decide(actor, planId, request) {
      const result = await plans.decide(actor, planId, request)
      telemetry.add('warrant_approval_decisions_total', { resource: result.resource, decision: result.decision })
      return result
    },
  }
}
