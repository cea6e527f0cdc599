import { type Actor, type Filter, WarrantError } from '../contract/index.js'
import { type SelectionContext, assertInScope } from './context.js'
import { followUpOnce } from './follow-ups.js'
import { load, members } from './load.js'
import { assertSameUpstream } from './usability.js'
import type { SelectionView } from './schemas.js'
import type { FreezeProgress, SelectionRecord } from './selection-service.js'
import { SELECTION_DEFAULT_BUDGET, freezeFromWalk } from './walk.js'

/** A recovery is a filter `{id: {in: [...]}}`, and a filter's `in` holds at most this many values. */
export const RECOVERY_MAX_IDS = 10_000

/** What no recovery can do, said wherever one is offered: it names ids, and a record the walk missed has none there. */
export const UNREACHED = 'it holds only those, not the records the walk never reached: for those, walk the whole filter again'

/**
 * How a view tells its reader to recover an incomplete selection; null for a complete one, and for one that
 * returned nothing (its upstream down from the start): `recover` refuses that, there being no id to name.
 */
export function recoveryLink(selection: SelectionRecord): SelectionView['recovery'] {
  if (selection.complete || selection.count === 0) return null
  return {
    method: 'POST',
    path: `/v1/selections/${selection.selection_id}/recover`,
    count: selection.count,
    message:
      selection.count > RECOVERY_MAX_IDS
        ? `the inventory was incomplete; a recovery names at most ${RECOVERY_MAX_IDS} ids and this selection returned ${selection.count}: narrow the filter instead`
        : `the inventory was incomplete: this selection can be reviewed, never committed. Its recovery is a new selection of exactly the ${selection.count} record(s) it returned, complete once its walk reads every one of them again; ${UNREACHED}`,
  }
}

/**
 * Freezes a new selection over exactly the ids an earlier one returned; returns its id, and whether this call
 * created it (false: the recovery this principal already made, or one made at the same moment).
 */
export async function recover(
  ctx: SelectionContext,
  actor: Actor,
  selectionId: string,
  signal?: AbortSignal,
  onProgress?: (progress: FreezeProgress) => void,
): Promise<{ readonly id: string; readonly created: boolean }> {
  const old = await load(ctx, actor, selectionId)
  const resource = ctx.catalogue.get(old.resource)
  assertInScope(actor, resource.name)
  if (old.origin?.kind === 'compensation')
    throw new WarrantError('conflict', `selection ${selectionId} holds the targets of a compensation; it was not read from an inventory and has nothing to recover`)
  // its ids were read where the connector pointed then: read by id elsewhere, they could name other records
  assertSameUpstream(ctx, old)
  if (old.count === 0)
    throw new WarrantError('conflict', `selection ${selectionId} returned no record; there is nothing to recover: create a new selection`, { selection_id: selectionId })
  if (old.count > RECOVERY_MAX_IDS)
    throw new WarrantError(
      'invalid_request',
      `selection ${selectionId} returned ${old.count} records; a recovery names at most ${RECOVERY_MAX_IDS} ids (the filter's "in" limit). Narrow the filter and create smaller selections`,
      { count: old.count, max: RECOVERY_MAX_IDS },
    )
  // An incomplete recovery (its own walk failed) is no answer to asking again; one frozen while this walk ran is
  // this same request's answer, though (all failed together): one object, not one each.
  return followUpOnce(
    ctx,
    actor,
    'recovery',
    selectionId,
    () => true,
    async (once) => {
      // Member ids are stored as strings; the filter has to carry them in the id field's own type.
      const idType = resource.config.fields[resource.config.id_field]
      const ids: (string | number)[] = []
      for (let after = 0; ; ) {
        const page = await members(ctx, selectionId, after, 1000)
        for (const m of page) ids.push(idType === 'number' || idType === 'integer' ? numericId(selectionId, m.id) : m.id)
        signal?.throwIfAborted()
        if (page.length < 1000) break
        after = page[page.length - 1]!.ord
      }
      const filter: Filter = { [resource.config.id_field]: { in: ids } }
      return freezeFromWalk(ctx, actor, resource, {
        filter,
        exclude: old.selector.exclude,
        fields: old.fields,
        pageSize: 1000,
        budget: SELECTION_DEFAULT_BUDGET,
        origin: { kind: 'recovery', selection_id: selectionId },
        ...(signal ? { signal } : {}),
        ...(onProgress ? { onProgress } : {}),
        once,
      })
    },
  )
}

/**
 * A member's id as the number a filter carries; refused where the number would not be that id: a filter's
 * numbers are JSON numbers, and one past 2^53 rounds, so the recovery would select a neighbour instead.
 */
function numericId(selectionId: string, id: string): number {
  const n = Number(id)
  if (Number.isFinite(n) && (Number.isSafeInteger(n) || !/^\s*-?\d+\s*$/.test(id))) return n
  throw new WarrantError(
    'invalid_request',
    `selection ${selectionId} returned record "${id}", an integer id past 2^53: a filter's numbers cannot name it exactly, so a recovery by id could select another record. Narrow the filter and create a new selection instead`,
    { id },
  )
}
