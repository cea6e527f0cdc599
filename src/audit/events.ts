import type { UpstreamCall } from '../connectors/index.js'
import { canonicalJson, wellFormed, type RunEvent } from '../contract/index.js'

export type { RunEvent }
import type { UnhashedAuditRow } from './chain.js'
import { REDACTED, scrubSecrets } from './redact.js'

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

export function runRow(event: RunEvent, now: () => string, denied?: ReadonlySet<string>): NewRow {
  const actor = event.actor
  const details =
    event.details == null && actor === null
      ? null
      : json({ ...(actor ? { actor: { name: actor.name, role: actor.role } } : {}), ...(event.details ?? {}) }, denied)
  return {
    level: 'run',
    at: now(),
    principal: column(actor?.principal),
    surface: column(event.surface ?? actor?.surface) ?? 'system',
    action: column(event.action) ?? '(none)',
    summary: json(event.summary ?? {}, denied),
    selection_id: column(event.selection_id),
    plan_id: column(event.plan_id),
    operation_id: column(event.operation_id),
    target_id: column(event.target_id),
    details,
  }
}

export function callRow(call: CallEvent, now: () => string): NewRow {
  const endpoint = templateOnly(String(call.endpoint))
  return {
    level: 'call',
    at: now(),
    principal: column(call.principal),
    surface: UPSTREAM_SURFACE,
    action: column(`${call.method} ${endpoint}`)!,
    summary: json({
      source: call.source,
      method: call.method,
      endpoint,
      status: call.status,
      outcome: call.outcome,
      duration_ms: call.durationMs,
      ...(call.window === undefined ? {} : { window: call.window }),
      ...(call.ids === undefined ? {} : { ids: call.ids }),
      ...(call.selection_digest ? { selection_digest: call.selection_digest } : {}),
    }),
    selection_id: column(call.selection_id),
    plan_id: column(call.plan_id),
    operation_id: column(call.operation_id),
    target_id: column(call.targetId),
    details: null,
  }
}

/**
 * The endpoint with every literal query value replaced by `[redacted]`, names and `{placeholders}` kept. An API
 * that takes its key in the query string is configured with the key in the path (`/items/{id}?api_key=…`; a
 * connector's credential goes in a header only), and the endpoint a call row records is that path.
 *
 * @example templateOnly('/items/{id}?api_key=sk_1&expand={id}') // '/items/{id}?api_key=[redacted]&expand={id}'
 */
function templateOnly(endpoint: string): string {
  const at = endpoint.indexOf('?')
  if (at < 0) return endpoint
  const query = endpoint
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      if (eq < 0) return pair
      const value = pair.slice(eq + 1)
      return /^\{[^{}]*\}$/.test(value) || value === '' ? pair : `${pair.slice(0, eq)}=${REDACTED}`
    })
  return `${endpoint.slice(0, at)}?${query.join('&')}`
}

/**
 * A text column exactly as both stores keep it, so the hash computed before the insert is the hash of what
 * is read back: a number or other value becomes its text (SQLite and PostgreSQL would do that silently, and
 * the row would no longer match its hash), lone UTF-16 surrogates become U+FFFD (UTF-8 cannot hold them),
 * NUL becomes U+FFFD (PostgreSQL text cannot hold it).
 */
export function column(value: unknown): string | null {
  if (value === null || value === undefined) return null
  const text = typeof value === 'string' ? value : typeof value === 'object' ? (JSON.stringify(value) ?? String(value)) : String(value)
  return wellFormed(text).replaceAll('\0', '\uFFFD')
}

/** Canonical JSON of the value with secrets redacted. */
function json(value: unknown, denied?: ReadonlySet<string>): string {
  return canonicalJson(scrubSecrets(value, denied))
}
