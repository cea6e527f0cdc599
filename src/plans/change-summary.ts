import { type Actor, WarrantError, canonicalJson } from '../contract/index.js'
import { actionConfigOf, renderWrite } from './actions.js'
import { type PlanContext, loadRow, scoped, selectionOf, toRecord } from './plan-context.js'
import type { ChangesPage, PlanView } from './schemas.js'

/** Distinct values listed per field in a change summary; beyond it the summary says it is incomplete. */
const SUMMARY_VALUES_MAX = 50

/** The change summary as stored on the plan, computed once at proposal so views need not re-read every member. */
export interface StoredChanges {
  readonly summary: PlanView['changes']['summary']
  readonly uniform: boolean
  readonly failing_now: number | null
  /** Targets the write changes (absent in plans stored before it was counted). */
  readonly changing?: number | null
}

/** Before and after values of one field over every target. */
export class FieldTally {
  readonly #after = new Map<string, { value: unknown; count: number }>()
  readonly #before = new Map<string, { value: unknown; count: number }>()
  #afterOverflow = 0
  #beforeOverflow = 0
  #unchanged = 0

  add(before: unknown, after: unknown): void {
    const b = canonicalJson(before ?? null)
    const a = canonicalJson(after ?? null)
    if (a === b) this.#unchanged += 1
    if (!bump(this.#after, a, after ?? null)) this.#afterOverflow += 1
    if (!bump(this.#before, b, before ?? null)) this.#beforeOverflow += 1
  }

  summary(field: string): PlanView['changes']['summary'][number] {
    const sort = (m: Map<string, { value: unknown; count: number }>) => [...m.values()].sort((x, y) => y.count - x.count)
    const afters = sort(this.#after)
    const uniform = afters.length <= 1 && this.#afterOverflow === 0
    return {
      field,
      after: uniform ? (afters[0]?.value ?? null) : null,
      ...(uniform ? {} : { after_values: afters }),
      before: sort(this.#before),
      before_complete: this.#beforeOverflow === 0,
      unchanged: this.#unchanged,
    }
  }
}

function bump(map: Map<string, { value: unknown; count: number }>, key: string, value: unknown): boolean {
  const entry = map.get(key)
  if (entry) entry.count += 1
  else if (map.size < SUMMARY_VALUES_MAX) map.set(key, { value, count: 1 })
  else return false
  return true
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
  return {
    plan_id: planId,
    plan_digest: row.plan_digest,
    target_count: total,
    complete: selection.complete,
    incomplete_reasons: [...selection.completeness.incomplete_reasons],
    changes: page.map((m) => {
      const rendered = renderWrite(ctx, plan, config, { id: m.id, version: m.version })
      return { ord: m.ord, id: m.id, version: m.version, changes: Object.entries(rendered.set).map(([field, after]) => ({ field, before: m.fields[field] ?? null, after })) }
    }),
    next_cursor: last && page.length === limit && last.ord < total ? ctx.cursors.encode(row.selection_id, list, last.ord) : null,
  }
}
