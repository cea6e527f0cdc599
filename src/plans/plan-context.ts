import { type Actor, SYSTEM_ACTOR, WarrantError, inScope } from '../contract/index.js'
import type { Catalogue } from '../resources/index.js'
import type { PageCursors } from '../selections/page-cursor.js'
import type { SelectionMember, SelectionRecord, SelectionService } from '../selections/selection-service.js'
import { storeNowColumn, type IsoTimestamp, type PlanRow, type Store } from '../store/index.js'
import type { PlanRecord } from './plan-service.js'
import type { ReviewPages } from './review-link.js'
import type { ExecutionConfig } from './run-limits.js'

/** What the pieces of the plan service share, so each concept can live in its own module. */
export interface PlanContext {
  readonly store: Store
  readonly db: Store['db']
  readonly catalogue: Catalogue
  readonly selections: SelectionService
  /** `config.execution`: the stop rules and pacing a plan binds at proposal, and judges drift against after. */
  readonly execution: ExecutionConfig
  readonly clock: () => Date
  readonly nowIso: () => string
  readonly cursors: PageCursors
  /** Where the review pages are (see PlanServiceOptions.reviewPages); undefined: review_url is a path. */
  readonly reviewPages?: (() => ReviewPages) | undefined
}

export type CanonicalAction = { readonly type: string; readonly params: Readonly<Record<string, unknown>> }

const MEMBER_PAGE = 1000

export async function loadRow(ctx: PlanContext, planId: string): Promise<PlanRow> {
  const row = await ctx.db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirst()
  if (!row) throw new WarrantError('not_found', `no plan "${planId}"`, { plan_id: planId })
  return row
}

/**
 * The plan's row and the store's now, read by one statement: approvals and selections lapse on the store's clock, the
 * database's on PostgreSQL (see store/store-clock.ts), so every instance sharing the store judges them alike.
 */
export async function loadRowAt(ctx: PlanContext, planId: string): Promise<{ readonly row: PlanRow; readonly now: IsoTimestamp }> {
  const found = await ctx.db.selectFrom('plans').selectAll().select(storeNowColumn(ctx.db, ctx.nowIso()).as('store_now')).where('id', '=', planId).executeTakeFirst()
  if (!found) throw new WarrantError('not_found', `no plan "${planId}"`, { plan_id: planId })
  const { store_now: now, ...row } = found
  return { row, now }
}

export function scoped(actor: Actor, resource: string, action?: string): void {
  if (!inScope(actor, resource)) throw new WarrantError('forbidden', `resource "${resource}" is outside this principal's scope`, { resource })
  if (action !== undefined && !inScope(actor, resource, action))
    throw new WarrantError('forbidden', `action "${action}" on "${resource}" is outside this principal's scope`, { resource, action })
}

export function toRecord(row: PlanRow, state: PlanRecord['state'] = row.state): PlanRecord {
  return {
    plan_id: row.id,
    selection_id: row.selection_id,
    resource: row.resource,
    environment: row.environment,
    action: JSON.parse(row.action) as CanonicalAction,
    plan_digest: row.plan_digest,
    selection_digest: row.selection_digest,
    target_count: Number(row.target_count),
    state,
    proposed_by: row.proposed_by,
    created_at: row.created_at,
    compensates: row.compensates,
  }
}

/** The selection behind a plan, read on the plan's behalf (the caller has checked its own scope on the plan). */
export async function selectionOf(ctx: PlanContext, row: PlanRow): Promise<SelectionRecord> {
  return ctx.selections.load(SYSTEM_ACTOR, row.selection_id)
}

/** Pages through the frozen members so a large selection is never held in memory at once. */
export async function forEachMember(ctx: PlanContext, selectionId: string, visit: (member: SelectionMember) => void): Promise<void> {
  for (let after = 0; ; ) {
    const page = await ctx.selections.members(selectionId, after, MEMBER_PAGE)
    for (const m of page) visit(m)
    if (page.length < MEMBER_PAGE) return
    after = page[page.length - 1]!.ord
  }
}
