import type { Actor } from './actor.js'

/** A run-level event: who asked for what, on which surface, and what was decided. */
export interface RunEvent {
  /** who asked; null for the gateway's own events */
  readonly actor: Actor | null
  /** defaults to the actor's surface, else `system` */
  readonly surface?: string
  /** the tool or endpoint, e.g. `POST /v1/plans/{id}/approvals` or `mcp:commit_change` */
  readonly action: string
  /** a short summary of the request (ids, counts, filter); secret-like keys are redacted */
  readonly summary?: Readonly<Record<string, unknown>>
  readonly selection_id?: string | null
  readonly plan_id?: string | null
  readonly operation_id?: string | null
  readonly target_id?: string | null
  /**
   * what was decided and by whom, e.g. `{ decision: 'approve', plan_digest, expires_at }`. An event whose
   * details carry `decision` is an approval. The log adds `actor: { name, role }` from the actor.
   */
  readonly details?: Readonly<Record<string, unknown>> | null
}
