import type { UpstreamCall } from '../connectors/index.js'
import { canonicalJson, type RunEvent } from '../contract/index.js'

export type { RunEvent }
import type { UnhashedAuditRow } from './chain.js'
import { scrubSecrets } from './redact.js'

/** What an upstream call was made for: the operation, plan and selection it served. */
export interface CallContext {
  readonly operation_id?: string | null
  readonly selection_digest?: string | null
  readonly selection_id?: string | null
  readonly plan_id?: string | null
  /** who the call was made for, when known */
  readonly principal?: string | null
}

/** A call-level event: one upstream call, with the operation and selection it served. */
export type CallEvent = UpstreamCall & CallContext

/** Surface recorded on call-level rows. */
export const UPSTREAM_SURFACE = 'upstream'

/** A row before the append gives it its place in the chain. */
export type NewRow = Omit<UnhashedAuditRow, 'seq' | 'prev_hash'>

export function runRow(event: RunEvent, now: () => string): NewRow {
  const actor = event.actor
  const details =
    event.details == null && actor === null
      ? null
      : json({ ...(actor ? { actor: { name: actor.name, role: actor.role } } : {}), ...(event.details ?? {}) })
  return {
    level: 'run',
    at: now(),
    principal: actor?.principal ?? null,
    surface: event.surface ?? actor?.surface ?? 'system',
    action: event.action,
    summary: json(event.summary ?? {}),
    selection_id: event.selection_id ?? null,
    plan_id: event.plan_id ?? null,
    operation_id: event.operation_id ?? null,
    target_id: event.target_id ?? null,
    details,
  }
}

export function callRow(call: CallEvent, now: () => string): NewRow {
  return {
    level: 'call',
    at: now(),
    principal: call.principal ?? null,
    surface: UPSTREAM_SURFACE,
    action: `${call.method} ${call.endpoint}`,
    summary: json({
      source: call.source,
      method: call.method,
      endpoint: call.endpoint,
      status: call.status,
      outcome: call.outcome,
      duration_ms: call.durationMs,
      ...(call.selection_digest ? { selection_digest: call.selection_digest } : {}),
    }),
    selection_id: call.selection_id ?? null,
    plan_id: call.plan_id ?? null,
    operation_id: call.operation_id ?? null,
    target_id: call.targetId ?? null,
    details: null,
  }
}

/** Canonical JSON of the value with secrets redacted. */
function json(value: unknown): string {
  return canonicalJson(scrubSecrets(value))
}
