import { type Actor, WarrantError } from '../contract/index.js'
import { type SelectionContext, assertInScope } from './context.js'
import { followUpOnce } from './follow-ups.js'
import { load } from './load.js'
import { parseRequest } from './parse-request.js'
import { selectionBudgetSchema } from './schemas.js'
import type { FreezeProgress } from './selection-service.js'
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
  // A complete retry is the answer, whatever its deadline: every record is there, and a second one would be a second
  // plan of the same action over the same records. One frozen while this walk ran answers it under a deadline at
  // least as long (it is this same request's answer; a longer deadline asked for is not).
  return followUpOnce(
    ctx,
    actor,
    'retry',
    selectionId,
    (origin) => origin.kind === 'retry' && origin.deadline_ms >= budget.deadline_ms,
    (once) =>
      createFromRequest(
        ctx,
        actor,
        old.resource,
        { filter: old.selector.filter, exclude: old.selector.exclude, fields: old.fields, budget },
        onProgress,
        signal,
        { origin: { kind: 'retry', selection_id: selectionId, deadline_ms: budget.deadline_ms }, once },
      ),
  )
}
