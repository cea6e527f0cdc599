import { type Actor, WarrantError } from '../contract/index.js'
import { type SelectionContext, assertInScope } from './context.js'
import { load } from './load.js'
import { parseRequest } from './parse-request.js'
import { selectionBudgetSchema } from './schemas.js'
import type { FreezeProgress, SelectionOrigin } from './selection-service.js'
import { createFromRequest } from './walk.js'

/**
 * Walks a selection's selector again, from the start, as a new selection under a longer deadline; returns its id,
 * and whether this call created it (false: the retry this principal already made, or one made at the same moment).
 *
 * The same retry is the same object, as a recovery is: a form sent twice (a double click, a second tab, back and
 * send again) made two walks and two selections, and from a plan page two pending plans of one action over the
 * same records, which a second reviewer could approve and commit both of.
 */
export async function retry(
  ctx: SelectionContext,
  actor: Actor,
  selectionId: string,
  deadlineMs: number,
  signal?: AbortSignal,
  onProgress?: (progress: FreezeProgress) => void,
): Promise<{ readonly id: string; readonly created: boolean }> {
  // checked before any earlier retry is looked up: a deadline out of range is refused, never answered with one
  const budget = parseRequest(selectionBudgetSchema.required({ deadline_ms: true }), { deadline_ms: deadlineMs }, 'retry budget')
  const old = await load(ctx, actor, selectionId)
  assertInScope(actor, old.resource)
  if (old.origin?.kind === 'compensation')
    throw new WarrantError('conflict', `selection ${selectionId} holds the targets of a compensation; it was not read from an inventory and has no walk to retry`)
  // This principal's retries of this selection, still frozen and unexpired. Serialized as `insertBuilding` stores
  // the origin, so the prefix finds them; the parse confirms each.
  const prefix = `${JSON.stringify({ kind: 'retry', selection_id: selectionId }).slice(0, -1)},`
  const retries = async (db: SelectionContext['db']) => {
    const rows = await db
      .selectFrom('selections')
      .select(['id', 'origin', 'complete'])
      .where('origin', 'like', `${prefix}%`)
      .where('created_by', '=', actor.principal)
      .where('state', '=', 'frozen')
      .where('expires_at', '>', ctx.nowIso())
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    return rows.flatMap((r) => {
      const origin = JSON.parse(r.origin ?? 'null') as SelectionOrigin | null
      return origin?.kind === 'retry' && origin.selection_id === selectionId ? [{ id: r.id, complete: r.complete === 1, deadlineMs: origin.deadline_ms }] : []
    })
  }
  // A complete retry is the answer, whatever its deadline: every record is there, and a second one would be a second
  // plan of the same action over the same records. An incomplete one already there is not (as for a recovery): its
  // reasons told the reviewer to retry, so asking again walks again.
  const before = await retries(ctx.db)
  const done = before.find((r) => r.complete)
  if (done) return { id: done.id, created: false }
  const knownIncomplete = new Set(before.map((r) => r.id))
  let raced = false
  const id = await createFromRequest(
    ctx,
    actor,
    old.resource,
    { filter: old.selector.filter, exclude: old.selector.exclude, fields: old.fields, budget },
    onProgress,
    signal,
    {
      origin: { kind: 'retry', selection_id: selectionId, deadline_ms: budget.deadline_ms },
      // Equal retries at the same moment (two tabs, a double click) all walk; which one is frozen is decided under
      // this lock, the others discarded: a complete one, or an incomplete one frozen while this walk ran, under a
      // deadline at least as long (it is this same request's answer; a longer deadline asked for is not).
      once: {
        key: `retry:${selectionId}:${actor.principal}`,
        existing: async (db) => {
          const now = await retries(db)
          const other = now.find((r) => r.complete) ?? now.find((r) => !knownIncomplete.has(r.id) && r.deadlineMs >= budget.deadline_ms)
          raced = other !== undefined
          return other?.id
        },
      },
    },
  )
  return { id, created: !raced }
}
