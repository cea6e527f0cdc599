import { matchesFilter, quotedKey } from '../contract/index.js'
import type { WriteOutcome } from '../connectors/index.js'
import { checkRecordFields, sameValue, sameVersion, versionText } from './effect.js'
import { rereadOne } from './reread.js'
import { rateLimitKindFor } from './wait-words.js'
import { rateLimitedApplied, type Attempt, type PreparedWrite, type TargetContext } from './target-step.js'

/**
 * An upstream's refusal of a write for a conflict: 409 Conflict, 412 Precondition Failed, or 404 Not Found on
 * every source for a record read just before (its API's own 404, not a page for a path with no route).
 */
export type ConflictAnswer = Extract<WriteOutcome, { kind: 'conflict' }> & { readonly status: 404 | 409 | 412 }

export function isConflictAnswer(outcome: WriteOutcome): outcome is ConflictAnswer {
  return outcome.kind === 'conflict' && (outcome.status === 404 || outcome.status === 409 || outcome.status === 412)
}

/**
 * Why the upstream refused a write with 409, 412 or 404. The record existed, at its version and meeting the
 * precondition, when read just before the write, so the refusal alone does not say it changed: the record is
 * re-read. Gone (404): `skipped`, missing. Changed since (an optimistic lock's 409, If-Match's 412): `skipped` for
 * that change, seen in its version, the precondition, or any field of the record as read. As it was read: the upstream refused the write itself (a lock of its own, a duplicate value, a weak
 * ETag compared strongly, a write endpoint that does not know the record the read endpoint shows), which it will likely do
 * to every target: `failed`, reason `rejected`, a refusal the validation threshold counts. It was a skip ("no
 * longer meets the precondition", "no longer exists upstream"), which ends the error streak and counts toward no
 * threshold, so an upstream refusing every write so was written to target after target, and the operation ended
 * `completed_with_skips`.
 * Nothing was written either way.
 */
export async function judgeConflict(ctx: TargetContext, prepared: PreparedWrite, outcome: ConflictAnswer): Promise<Attempt> {
  const { request, record, rendered, before, done } = prepared
  const id = request.id
  const status = outcome.status
  const refused = (message: string) =>
    done({ state: 'failed', reason: 'rejected', upstream_status: status, message: `${outcome.message}; ${message}; nothing was written`, before }, { validation: true })
  const skipped = (reason: 'version_changed' | 'precondition_failed' | 'missing', message: string) =>
    done({ state: 'skipped', reason, upstream_status: status, message: `${outcome.message}; ${message}; nothing was written`, before })
  const reread = await rereadOne(ctx.connector, id, 'after', request.source)
  if (reread.kind === 'missing') return skipped('missing', `re-read, record ${quotedKey(id)} no longer exists`)
  if (reread.kind !== 'found') return refused(`re-reading the record failed (${reread.message}), so whether it changed is not known: the refusal is taken as the upstream's`)
  const now = reread.record
  // the read before this write may have lagged behind an earlier write of it answered 429 but applied: the record
  // moved to the approved values is then possibly our own write, not another writer's change
  if (!sameVersion(now.version, record.version) && prepared.earlierWrite && checkRecordFields(now.fields, rendered.expect.fields, ctx.fieldTypes).kind === 'holds')
    return done({ ...rateLimitedApplied(id, record.version, now.version, rateLimitKindFor(ctx.execution, () => ctx.connector.kind)), upstream_status: status })
  if (!sameVersion(now.version, record.version))
    return skipped('version_changed', `re-read, record ${quotedKey(id)} is at ${versionText(now.version)}, not at ${versionText(record.version)}: it changed since it was read`)
  const moved = rendered.holds ? Object.keys(rendered.holds).find((f) => !ctx.hidden.has(f) && !sameValue(now.fields[f], rendered.holds![f])) : undefined
  if (moved !== undefined || !matchesFilter(now.fields, request.precondition, ctx.fieldTypes))
    return skipped('precondition_failed', `re-read, record ${quotedKey(id)} no longer meets the precondition: it changed since it was read`)
  // A version that does not move on every write (a constant, an updated_at of one-second resolution) leaves another
  // writer's change unseen by it: the whole record as read is compared, or that change is called the upstream's own
  // refusal of the write, and counted toward a halt. A field withheld from review is compared but never named; one
  // only one of the reads carries (a list's item and a get's answer may differ in shape) says nothing either way.
  const changed = Object.keys(record.fields).filter((f) => f in now.fields && !sameValue(now.fields[f], record.fields[f]))
  if (changed.length > 0) {
    const shown = changed.filter((f) => !ctx.hidden.has(f))
    const named = shown.length > 0 ? shown.map((f) => quotedKey(f)).join(', ') : 'a field withheld from review'
    return skipped('version_changed', `re-read, record ${quotedKey(id)} is still at ${versionText(now.version)} but ${named} changed: it changed since it was read`)
  }
  return refused(`re-read, record ${quotedKey(id)} is as read before the write (${versionText(now.version)}, every field as read): the upstream refused the write itself, not a change to the record`)
}
