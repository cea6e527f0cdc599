import { sql } from 'kysely'
import type { Store } from '../store/index.js'
import { clampLimit, isRefusedClaim, parseJson, toEntry, type AuditEntry } from './entry.js'
import { UNVERIFIED_LISTING } from './query.js'
import { linkedIds } from './who-asked-ids.js'

/** Call outcomes that mean a write happened upstream. */
export const WRITE_SUCCEEDED_OUTCOMES = ['written', 'succeeded'] as const
/** A write without a durable answer: it may have happened. */
export const WRITE_UNKNOWN_OUTCOMES = ['unknown'] as const

export const WHO_ASKED_LIMIT = 5000

/** One approval or rejection, as recorded. */
export interface RecordedApproval {
  readonly seq: number
  readonly at: string
  readonly plan_id: string | null
  readonly decision: string
  readonly principal: string | null
  readonly name: string | null
  readonly role: string | null
  readonly surface: string
  readonly action: string
  readonly details: unknown
}

/** One principal that acted on the operation, its plan or its selection (approvals aside). */
export interface Requester {
  readonly principal: string | null
  readonly name: string | null
  readonly role: string | null
  readonly surfaces: string[]
  readonly actions: string[]
  readonly first_at: string
  readonly last_at: string
}

/** "Which process asked for this?": the run-level events for an operation, its plan and its selection. */
export interface WhoAsked {
  readonly operation_id: string
  readonly plan_ids: string[]
  readonly selection_ids: string[]
  readonly requesters: Requester[]
  readonly approvals: RecordedApproval[]
  readonly events: AuditEntry[]
  /** more than {@link WHO_ASKED_LIMIT} events matched: `events` holds the first ones (the rest of the answer covers every one) */
  readonly truncated: boolean
  /** always false: gathered from the rows as stored (see UNVERIFIED_LISTING) */
  readonly verified: false
  readonly verification: string
}

/** One record an upstream call changed. */
export interface ChangedRecord {
  readonly seq: number
  readonly at: string
  readonly target_id: string | null
  readonly source: string | null
  readonly method: string | null
  readonly endpoint: string | null
  readonly status: number | null
  readonly outcome: string | null
}

export interface RecordsChangedOptions {
  /** also list writes that ended `unknown` (they may have happened); default false */
  readonly include_unknown?: boolean
  readonly after_seq?: number
  /** 1..10000; default 1000 */
  readonly limit?: number
}

/** "Which records changed?": the call-level writes of an operation that succeeded. */
export interface RecordsChanged {
  readonly operation_id: string
  readonly records: ChangedRecord[]
  readonly next_cursor: number | null
}

export async function whoAsked(store: Store, operationId: string): Promise<WhoAsked> {
  const db = store.db
  // The operation's plans and selections, then every run-level event of the operation, or of those plans and
  // selections that belongs to no other operation or plan.
  const { planIds, selectionIds } = await linkedIds(store, operationId)
  const page = (after: number) =>
    db
      .selectFrom('audit_events')
      .selectAll()
      .where('level', '=', 'run')
      .where('seq', '>', after)
      .where((eb) =>
        eb.or([
          eb('operation_id', '=', operationId),
          ...(planIds.length > 0 ? [eb.and([eb('operation_id', 'is', null), eb('plan_id', 'in', planIds)])] : []),
          ...(selectionIds.length > 0 ? [eb.and([eb('operation_id', 'is', null), eb('plan_id', 'is', null), eb('selection_id', 'in', selectionIds)])] : []),
        ]),
      )
      .orderBy('seq')
      .limit(WHO_ASKED_LIMIT)
      .execute()
  // Every event is summarised, a page at a time (one statement when they fit in one): an agent polling the operation
  // makes thousands of rows, and a summary of the first ones left out everyone who acted after them. Only the
  // events kept for the answer are capped.
  const summary = whoAskedSummary()
  const events: AuditEntry[] = []
  let truncated = false
  for (let after = 0; ; ) {
    const rows = await page(after)
    for (const row of rows) {
      const event = toEntry(row)
      summary.add(event)
      if (events.length < WHO_ASKED_LIMIT) events.push(event)
      else truncated = true
    }
    if (rows.length < WHO_ASKED_LIMIT) break
    after = rows[rows.length - 1]!.seq
  }
  return { operation_id: operationId, ...summary.result(), events, truncated, verified: false, verification: UNVERIFIED_LISTING }
}

export async function recordsChanged(store: Store, operationId: string, opts: RecordsChangedOptions = {}): Promise<RecordsChanged> {
  const limit = clampLimit(opts.limit, 1000, 10_000)
  const outcomes = [...WRITE_SUCCEEDED_OUTCOMES, ...(opts.include_unknown ? WRITE_UNKNOWN_OUTCOMES : [])]
  let q = store.db
    .selectFrom('audit_events')
    .select(['seq', 'at', 'target_id', 'summary'])
    .where('level', '=', 'call')
    .where('operation_id', '=', operationId)
    .where(outcomeIn(store, outcomes))
    .orderBy('seq')
    .limit(limit + 1)
  if (opts.after_seq !== undefined) q = q.where('seq', '>', opts.after_seq)
  const rows = await q.execute()
  const page = rows.slice(0, limit)
  return {
    operation_id: operationId,
    records: page.map((row) => {
      const s = asRecord(parseJson(row.summary))
      return {
        seq: row.seq,
        at: row.at,
        target_id: row.target_id,
        source: stringOrNull(s.source),
        method: stringOrNull(s.method),
        endpoint: stringOrNull(s.endpoint),
        status: typeof s.status === 'number' ? s.status : null,
        outcome: stringOrNull(s.outcome),
      }
    }),
    next_cursor: rows.length > limit ? page[page.length - 1]!.seq : null,
  }
}

function outcomeIn(store: Store, outcomes: readonly string[]) {
  return sql<boolean>`(${sql.join(
    outcomes.map((o) => {
      // Call-level summaries are canonical JSON written by `callRow` (events.ts): the member appears exactly so.
      const needle = `"outcome":${JSON.stringify(o)}`
      return store.dialect === 'postgres' ? sql`strpos(summary, ${needle}) > 0` : sql`instr(summary, ${needle}) > 0`
    }),
    sql` or `,
  )})`
}

/** Who asked and who approved, gathered event by event in seq order. */
function whoAskedSummary() {
  const plans = new Set<string>()
  const selections = new Set<string>()
  const approvals: RecordedApproval[] = []
  const requesters = new Map<string, { principal: string | null; name: string | null; role: string | null; surfaces: Set<string>; actions: Set<string>; first_at: string; last_at: string }>()
  function add(event: AuditEntry): void {
    // a refusal's ids are what its caller named, not the operation's plans and selections; a row of the gateway's own
    // (a webhook delivery's receiver status) is no refusal (see isRefusedClaim)
    const refused = isRefusedClaim(event)
    if (!refused) {
      if (event.plan_id) plans.add(event.plan_id)
      if (event.selection_id) selections.add(event.selection_id)
    }
    const details = asRecord(event.details)
    const actor = asRecord(details.actor)
    const name = stringOrNull(actor.name)
    const role = stringOrNull(actor.role)
    // An approval is a decision that was accepted: a refused attempt (an agent's 403, a wrong digest's 409)
    // is the requester's event, never an approval, even in rows written before refusals were marked.
    if (typeof details.decision === 'string' && !refused) {
      approvals.push({ seq: event.seq, at: event.at, plan_id: event.plan_id, decision: details.decision, principal: event.principal, name, role, surface: event.surface, action: event.action, details: event.details })
      return
    }
    const key = event.principal ?? '(system)'
    const seen = requesters.get(key)
    if (seen) {
      seen.surfaces.add(event.surface)
      seen.actions.add(event.action)
      seen.last_at = event.at
      seen.name ??= name
      seen.role ??= role
    } else {
      requesters.set(key, { principal: event.principal, name, role, surfaces: new Set([event.surface]), actions: new Set([event.action]), first_at: event.at, last_at: event.at })
    }
  }
  const result = () => ({
    plan_ids: [...plans],
    selection_ids: [...selections],
    requesters: [...requesters.values()].map((r) => ({ ...r, surfaces: [...r.surfaces], actions: [...r.actions] })),
    approvals,
  })
  return { add, result }
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}
