import type { Actor } from '../contract/index.js'
import type { SelectionContext } from './context.js'
import type { FreezeOnce } from './selection-row.js'
import type { SelectionOrigin } from './selection-service.js'

/** A selection made from another one (its recovery or its retry), as `followUps` finds it. */
interface FollowUp {
  readonly id: string
  readonly complete: boolean
  readonly origin: Extract<SelectionOrigin, { kind: 'recovery' | 'retry' }>
}

/**
 * This principal's follow-ups of `kind` to selection `selectionId`, still frozen and unexpired, oldest first. A
 * recovery's origin is all of its stored text, so it is matched whole; a retry's carries its deadline after the
 * id, so the prefix of the text `insertBuilding` stores finds it. The parse confirms each.
 */
async function followUps(ctx: SelectionContext, db: SelectionContext['db'], principal: string, kind: FollowUp['origin']['kind'], selectionId: string): Promise<FollowUp[]> {
  const whole = JSON.stringify({ kind, selection_id: selectionId })
  const rows = await db
    .selectFrom('selections')
    .select(['id', 'origin', 'complete'])
    .where('origin', kind === 'recovery' ? '=' : 'like', kind === 'recovery' ? whole : `${whole.slice(0, -1)},%`)
    .where('created_by', '=', principal)
    .where('state', '=', 'frozen')
    .where('expires_at', '>', ctx.nowIso())
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.flatMap((r) => {
    const origin = JSON.parse(r.origin ?? 'null') as SelectionOrigin | null
    return origin?.kind === kind && origin.selection_id === selectionId ? [{ id: r.id, complete: r.complete === 1, origin }] : []
  })
}

/**
 * The same request for a follow-up is the same object: a complete follow-up of `kind` this principal already made
 * is the answer (a request after a lost answer, a double click, a second tab creates nothing). An incomplete one
 * already there is not: its reasons told the reader to ask again, so asking again walks again. Requests at the
 * same moment all walk (`freeze`); which one is frozen is decided under the lock of `once`, the others discarded:
 * a complete one, or an incomplete one frozen while this walk ran that `answers` this request.
 */
export async function followUpOnce(
  ctx: SelectionContext,
  actor: Actor,
  kind: FollowUp['origin']['kind'],
  selectionId: string,
  answers: (origin: FollowUp['origin']) => boolean,
  freeze: (once: FreezeOnce) => Promise<string>,
): Promise<{ readonly id: string; readonly created: boolean }> {
  const before = await followUps(ctx, ctx.db, actor.principal, kind, selectionId)
  const done = before.find((r) => r.complete)
  if (done) return { id: done.id, created: false }
  const knownIncomplete = new Set(before.map((r) => r.id))
  let raced = false
  const id = await freeze({
    key: `${kind}:${selectionId}:${actor.principal}`,
    existing: async (db) => {
      const now = await followUps(ctx, db, actor.principal, kind, selectionId)
      const other = now.find((r) => r.complete) ?? now.find((r) => !knownIncomplete.has(r.id) && answers(r.origin))
      raced = other !== undefined
      return other?.id
    },
  })
  return { id, created: !raced }
}
