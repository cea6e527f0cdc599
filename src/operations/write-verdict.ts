import type { SourceRecord, WriteOutcome } from '../connectors/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'
import { checkRecordFields, checkUntouched, sameVersion, type UntouchedCheck } from './effect.js'
import { rereadOne } from './reread.js'
import type { TargetContext } from './target-step.js'

/** What the record seen after a write says of the approved effect. */
export type Verdict =
  | { readonly kind: 'holds'; readonly after: SourceRecord; readonly version: string }
  /** `version`: the record's, where it was seen after the write (what a compensation needs to restore it) */
  | { readonly kind: 'contradicted'; readonly message: string; readonly after: Readonly<Record<string, unknown>> | null; readonly version?: string }
  | { readonly kind: 'unverified'; readonly message: string }
  /** accepted to be applied later (202), and not visible yet: neither proven nor contradicted */
  | { readonly kind: 'pending'; readonly message: string }
  /** seen after the write at the version it started from (see `unmoved`): proves nothing, halts */
  | { readonly kind: 'unmoved'; readonly message: string }

/**
 * What an accepted write did, judged on the whole record: the status is one the action expects; the answer is
 * the target (another record contradicts it); the set fields hold the approved values; every other field is as
 * it was. An answer that does not carry the record (an empty 204, a body without it, a partial body that
 * leaves fields out) is never taken on its status: the record is re-read by id and judged.
 */
export async function verifyWritten(
  ctx: TargetContext,
  w: { readonly id: string; readonly source?: string | undefined; readonly before: SourceRecord; readonly rendered: RenderedWrite; readonly outcome: Extract<WriteOutcome, { kind: 'written' }> },
): Promise<Verdict> {
  const { id, rendered, outcome } = w
  // (an answer naming another record is judged before this, target-step.ts judgeOtherRecord)
  const judge = (after: SourceRecord) => judgeRecord(ctx, w.before, rendered, after)
  // What the answer body showed against the approved effect, when it did not prove it.
  let answered: Extract<Verdict, { kind: 'contradicted' }> | null = null
  // An answer at the version the write started from is the record as it was, or a version that does not move:
  // only a re-read can tell which.
  if (outcome.record && !unmoved(w.before, outcome.newVersion ?? outcome.record.version)) {
    const check = judge(outcome.record)
    if (check.kind === 'holds') return { kind: 'holds', after: outcome.record, version: outcome.newVersion ?? outcome.record.version }
    // A body that leaves fields out may be a summary, not an erasure: only the record itself can tell.
    if (!check.vanishedOnly) {
      const contradicted = { kind: 'contradicted' as const, message: check.message, after: outcome.record.fields, version: outcome.newVersion ?? outcome.record.version }
      // An answer saying the approved values are not there is taken at its word: halting is the safe reading.
      if (checkRecordFields(outcome.record.fields, rendered.expect.fields, ctx.fieldTypes).kind !== 'holds') return contradicted
      // One differing only outside the set may be the write endpoint's rendering (numbers as strings, a field
      // expanded), not a change: `before` came from a read, so only a read compares with it. The answer's
      // contradiction stands where the record cannot be re-read.
      answered = contradicted
    }
  }
  const reread = await rereadOne(ctx.connector, id, 'after', w.source)
  const carried = outcome.record ? 'returned only part of the record' : 'did not return the record'
  // The upstream answered the re-read, but not with a well-formed target record: after our write, that is
  // what our write left (halting is the safe reading; carrying on could repeat it on every target). A 202, 203
  // or 206 is not the record by its own word (taken to answer later, rewritten on the way, a part of the answer:
  // unfinished-answer.ts), which says nothing of the write.
  if (reread.kind === 'failed' && reread.status !== undefined && reread.status >= 200 && reread.status < 300 && !NOT_THE_RECORD.has(reread.status))
    return { kind: 'contradicted', message: `the record read back is not the record it was: ${reread.message}`, after: null }
  if (reread.kind !== 'found' && answered) return answered
  if (reread.kind !== 'found')
    return { kind: 'unverified', message: `the upstream accepted the write (${outcome.status}) but ${carried}, and re-reading it failed (${reread.kind === 'missing' ? 'it no longer exists' : reread.message})` }
  const after = reread.record
  const stated = outcome.newVersion ?? outcome.record?.version
  if (stated !== undefined && !unmoved(w.before, stated) && !sameVersion(after.version, stated))
    return answered ?? { kind: 'unverified', message: `the upstream accepted the write (${outcome.status}) at version ${stated}, but re-read the record is already at version ${after.version}: someone wrote after us, so our effect cannot be checked` }
  const check = judge(after)
  if (unmoved(w.before, after.version)) return unmovedVerdict(after.version, check.kind === 'holds', `${outcome.status}`)
  if (check.kind === 'contradicted') return { kind: 'contradicted', message: `${check.message} (re-read after the write)`, after: after.fields, version: after.version }
  return { kind: 'holds', after, version: after.version }
}

/** 2xx statuses whose answer says of itself it is not the record (unfinished-answer.ts). */
const NOT_THE_RECORD: ReadonlySet<number> = new Set([202, 203, 206])

/**
 * Whether the version seen after a write is the one it started from. Then the record is as it was (the write
 * not applied, or a read served before it: a lagging replica), or the upstream's version does not change on
 * writes; either way the answer proves nothing, and a target recorded `failed` on it would never be revisited.
 */
export function unmoved(before: SourceRecord, version: string): boolean {
  return before.version !== '' && sameVersion(version, before.version)
}

export function unmovedVerdict(version: string, holds: boolean, answered: string): Extract<Verdict, { kind: 'unmoved' }> {
  return {
    kind: 'unmoved',
    message: holds
      ? `the upstream answered ${answered} and the record holds the approved values, but its version (${version}) did not move: a version that does not change on writes cannot make a write conditional, so a change made meanwhile may have been overwritten`
      : `the upstream answered ${answered}, but read after the write the record is still at version ${version}, as it was: the write did not apply, or the read was served before it (a lagging replica); reconcile the operation once the upstream shows it`,
  }
}


/**
 * What a write the upstream accepted to apply later (202) did. Its answer only says what the upstream means to
 * do, so the record is re-read at once: holding the effect, the write is proven; holding the approved values at
 * a new version but with something else changed, the write landed and did more (contradicted); anything else
 * (not applied yet, not readable) is pending, for a reconciliation once the upstream has applied it.
 */
export async function verifyAccepted(ctx: TargetContext, w: { readonly id: string; readonly source?: string | undefined; readonly before: SourceRecord; readonly rendered: RenderedWrite }): Promise<Verdict> {
  const reread = await rereadOne(ctx.connector, w.id, 'after', w.source)
  if (reread.kind !== 'found') return { kind: 'pending', message: reread.kind === 'missing' ? `re-read at once, "${w.id}" was not found` : reread.message }
  const after = reread.record
  const check = judgeRecord(ctx, w.before, w.rendered, after)
  if (check.kind === 'holds' && unmoved(w.before, after.version)) return unmovedVerdict(after.version, true, '202 Accepted')
  if (check.kind === 'holds') return { kind: 'holds', after, version: after.version }
  const landed = !sameVersion(after.version, w.before.version) && checkRecordFields(after.fields, w.rendered.expect.fields, ctx.fieldTypes).kind === 'holds'
  if (landed) return { kind: 'contradicted', message: `${check.message} (re-read after the write)`, after: after.fields, version: after.version }
  return { kind: 'pending', message: `re-read at once, the record does not hold the approved effect yet (${check.message})` }
}

/**
 * A record read after a write, judged whole: every expected field present with its approved value, and every
 * field outside the exempt paths as it was `before`.
 */
export function judgeRecord(ctx: TargetContext, before: SourceRecord, rendered: RenderedWrite, after: SourceRecord): UntouchedCheck {
  const absent = Object.keys(rendered.expect.fields).filter((f) => !Object.hasOwn(after.fields, f))
  if (absent.length > 0)
    return { kind: 'contradicted', message: `the record has no field ${absent.map((f) => `"${f}"`).join(', ')} (unexpected shape); the approved effect sets it`, vanishedOnly: true }
  const fields = checkRecordFields(after.fields, rendered.expect.fields, ctx.fieldTypes)
  if (fields.kind === 'contradicted') return { ...fields, vanishedOnly: false }
  return checkUntouched(representationOf(before), representationOf(after), rendered.exempt ?? Object.keys(rendered.set))
}

/** The whole record as the upstream sent it, or its fields where the connector has nothing more. */
function representationOf(record: SourceRecord): unknown {
  return record.representation ?? record.fields
}
