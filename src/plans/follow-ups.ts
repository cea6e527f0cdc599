import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { SelectionOrigin } from '../selections/selection-service.js'
import type { Database, PlanState } from '../store/index.js'

/** The plans an operation is followed by: the rest of it (never-sent targets) and its undo. */
export type FollowUpKind = 'remainder' | 'compensation'

/** A follow-up plan as an operation names it: where it is, its state, and the operation it became once committed. */
export type FollowUp = NonNullable<z.infer<typeof followUpSchema>>
export type FollowUps = Readonly<Record<FollowUpKind, FollowUp | null>>

/** An operation followed by nothing (yet). */
export const NO_FOLLOW_UPS: FollowUps = { remainder: null, compensation: null }

/** A rejected or expired follow-up is not one: proposing it again makes a new plan. */
const LIVE = ['pending', 'approved', 'committed'] as const satisfies readonly PlanState[]

/** How an operation's view names its follow-ups (one schema: HTTP, MCP and OpenAPI). */
const followUpSchema = z.object({ plan_id: z.string(), state: z.enum(LIVE), operation_id: z.string().nullable() }).nullable()
export const followUpsSchema = z
  .object({ remainder: followUpSchema, compensation: followUpSchema })
  .describe("the plan proposing this operation's rest, and its compensation: the committed one (with its operation_id), else the latest pending or approved; null: none")

/**
 * The live plans following an operation (pending, approved or committed), oldest first: a remainder is on a selection
 * of origin `remainder` naming the operation and its plan, a compensation names the operation it `compensates`. The
 * one query proposing again (which answers one of these) and the operation's view (which names the latest) read.
 */
export function followingPlans(db: Kysely<Database>, of: Extract<SelectionOrigin, { kind: 'remainder' }> | { readonly kind: 'compensation'; readonly operation_id: string }) {
  return db
    .selectFrom('plans')
    .selectAll('plans')
    .where((eb) =>
      of.kind === 'remainder'
        ? eb('plans.selection_id', 'in', eb.selectFrom('selections').select('selections.id').where('selections.origin', '=', JSON.stringify(remainderOrigin(of.operation_id, of.plan_id))))
        : eb('plans.compensates', '=', of.operation_id),
    )
    .where('plans.state', 'in', LIVE)
    .orderBy('plans.created_at')
    .orderBy('plans.id')
}

/** The origin a remainder's selection is stored with: the operation it finishes and that operation's plan. */
export function remainderOrigin(operationId: string, planId: string): Extract<SelectionOrigin, { kind: 'remainder' }> {
  return { kind: 'remainder', operation_id: operationId, plan_id: planId }
}

/**
 * The committed (else the latest) live follow-up of each kind of a finished operation, with the operation a committed one became, so a
 * reviewer sees that one exists and where (an unfinished operation has none: neither is proposed while it runs).
 * `remainder: false` skips the look-up where none can exist (nothing pending).
 */
export async function followUpsOf(db: Kysely<Database>, operationId: string, planId: string, look: { readonly remainder: boolean }): Promise<FollowUps> {
  const latest = async (kind: FollowUpKind): Promise<FollowUp | null> => {
    const rows = await followingPlans(db, kind === 'remainder' ? remainderOrigin(operationId, planId) : { kind, operation_id: operationId }).execute()
    // a committed one is always the answer to proposing again; otherwise the latest
    const row = rows.find((r) => r.state === 'committed') ?? rows[rows.length - 1]
    if (!row) return null
    const run = row.state === 'committed' ? await db.selectFrom('operations').select('id').where('plan_id', '=', row.id).orderBy('created_at', 'desc').executeTakeFirst() : undefined
    return { plan_id: row.id, state: row.state as FollowUp['state'], operation_id: run?.id ?? null }
  }
  return { remainder: look.remainder ? await latest('remainder') : null, compensation: await latest('compensation') }
}
