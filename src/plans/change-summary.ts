import { type Actor, type FieldTypeNames, type Filter, WarrantError, canonicalJson, clausesOf, matchesFilter } from '../contract/index.js'
import { actionConfigOf, renderWrite } from './actions.js'
import { type PlanContext, loadRow, scoped, selectionOf, toRecord } from './plan-context.js'
import type { ChangesPage, PlanView } from './schemas.js'

type RecordSkip = NonNullable<ChangesPage['changes'][number]['skipped']> | null

/** Distinct values listed per field in a change summary; beyond it the summary says it is incomplete. */
const SUMMARY_VALUES_MAX = 50

/** A compensation's moved targets listed by id with its stored changes; beyond it the others are "unknown". */
export const MOVED_IDS_MAX = 1000

/** The change summary as stored on the plan, computed once at proposal so views need not re-read every member. */
export interface StoredChanges {
  readonly summary: PlanView['changes']['summary']
  readonly uniform: boolean
  readonly failing_now: number | null
  /** Targets the write changes (absent in plans stored before it was counted). */
  readonly changing?: number | null
  /**
   * A compensation's targets that no longer held what the operation wrote when it was proposed, at most MOVED_IDS_MAX;
   * `complete` false when a target was not read or more moved than listed (absent in plans stored before it was kept).
   */
  readonly moved?: { readonly ids: readonly string[]; readonly complete: boolean }
}

/**
 * A member judged against the action's precondition as frozen, the rule both the summary and the per-record list
 * follow: a member frozen without a field the precondition tests cannot be judged ("unknown"), never counted as passing.
 */
export function preconditionVerdict(fields: Readonly<Record<string, unknown>>, precondition: Filter, declared: FieldTypeNames): 'passes' | 'fails' | 'unknown' {
  if (!clausesOf(precondition).every((c) => c.field in fields)) return 'unknown'
  return matchesFilter(fields, precondition, declared) ? 'passes' : 'fails'
}

/**
 * Before and after values of one field over every target, the written ones apart from those the write would skip
 * (failing the precondition as frozen; for a compensation, no longer holding what the operation wrote): counted
 * together, "paid" (17), "draft" (15) → "overdue" read as paid and draft invoices becoming overdue.
 */
export class FieldTally {
  readonly #after = new ValueCounts()
  readonly #before = new ValueCounts()
  readonly #skippedBefore = new ValueCounts()
  /** What the skipped targets would have received: said only where no target is written. */
  readonly #skippedAfter = new ValueCounts()
  #unchanged = 0
  #skipped = 0

  add(before: unknown, after: unknown, skipped = false): void {
    if (skipped) {
      this.#skipped += 1
      this.#skippedBefore.add(before)
      this.#skippedAfter.add(after)
      return
    }
    if (canonicalJson(after ?? null) === canonicalJson(before ?? null)) this.#unchanged += 1
    this.#after.add(after)
    this.#before.add(before)
  }

  summary(field: string): PlanView['changes']['summary'][number] {
    const after = this.#before.empty && this.#skipped > 0 ? this.#skippedAfter : this.#after
    const afters = after.sorted()
    const uniform = afters.length <= 1 && after.complete
    return {
      field,
      after: uniform ? (afters[0]?.value ?? null) : null,
      ...(uniform ? {} : { after_values: afters }),
      before: this.#before.sorted(),
      before_complete: this.#before.complete,
      unchanged: this.#unchanged,
      skipped: this.#skipped,
      skipped_before: this.#skippedBefore.sorted(),
      skipped_before_complete: this.#skippedBefore.complete,
    }
  }
}

/** Distinct values with their counts, at most SUMMARY_VALUES_MAX of them; `complete` false once one was left out. */
class ValueCounts {
  readonly #map = new Map<string, { value: unknown; count: number }>()
  #overflow = 0

  add(raw: unknown): void {
    const value = raw ?? null
    const key = canonicalJson(value)
    const entry = this.#map.get(key)
    if (entry) entry.count += 1
    else if (this.#map.size < SUMMARY_VALUES_MAX) this.#map.set(key, { value, count: 1 })
    else this.#overflow += 1
  }

  /** Nothing counted. */
  get empty(): boolean {
    return this.#map.size === 0
  }

  get complete(): boolean {
    return this.#overflow === 0
  }

  sorted(): { value: unknown; count: number }[] {
    return [...this.#map.values()].sort((x, y) => y.count - x.count)
  }
}

/** Per-record before → after, a page at a time; rendered on demand because only the summary is stored. */
export async function changesPage(ctx: PlanContext, actor: Actor, planId: string, query: { readonly cursor?: string; readonly limit?: number }): Promise<ChangesPage> {
  const row = await loadRow(ctx, planId)
  scoped(actor, row.resource)
  const limit = query.limit ?? 100
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new WarrantError('invalid_request', 'limit must be an integer from 1 to 1000', { field: 'limit' })
  const total = Number(row.target_count)
  const list = `changes:${planId}`
  const after = ctx.cursors.decode(row.selection_id, list, query.cursor, total)
  const plan = toRecord(row)
  const config = actionConfigOf(ctx, plan)
  const page = await ctx.selections.members(row.selection_id, after, limit)
  const selection = await selectionOf(ctx, row)
  const last = page[page.length - 1]
  // the rule the summary counted by, per record: "state: paid → overdue" read as written where it would be skipped
  const stored = JSON.parse(row.changes_summary) as StoredChanges
  const moved = new Set(stored.moved?.ids ?? [])
  const declared = ctx.catalogue.get(row.resource).config.fields
  const skippedOf = (m: { id: string; fields: Readonly<Record<string, unknown>> }): RecordSkip => {
    if (row.compensates !== null) return moved.has(m.id) ? 'no_longer_holds_written' : stored.moved?.complete ? null : 'unknown'
    if (!config.precondition) return null
    const verdict = preconditionVerdict(m.fields, config.precondition, declared)
    return verdict === 'fails' ? 'fails_precondition' : verdict === 'unknown' ? 'unknown' : null
  }
  return {
    plan_id: planId,
    plan_digest: row.plan_digest,
    target_count: total,
    complete: selection.complete,
    incomplete_reasons: [...selection.completeness.incomplete_reasons],
    changes: page.map((m) => {
      const rendered = renderWrite(ctx, plan, config, { id: m.id, version: m.version })
      const changes = Object.entries(rendered.set).map(([field, after]) => ({ field, before: m.fields[field] ?? null, after }))
      return { ord: m.ord, id: m.id, version: m.version, changes, skipped: skippedOf(m) }
    }),
    next_cursor: last && page.length === limit && last.ord < total ? ctx.cursors.encode(row.selection_id, list, last.ord) : null,
  }
}
