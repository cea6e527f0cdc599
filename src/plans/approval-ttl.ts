import type { Store } from '../store/index.js'

/**
 * How long an approval lasts once the operator changed `approval.ttl_minutes` after it was given. Its expiry was
 * stored when it was given; an operator who cuts the TTL from a day to 5 minutes (during an incident, say) means the
 * approvals standing then as well, not only those given from then on: each lasts until the earlier of its stored
 * expiry and its time plus the TTL the config asks now, and that earlier end, once seen, is stored. A longer TTL never
 * lengthens one, nor brings back one that lapsed under the cut. Both times are the store's
 * (its decision time was the database's on PostgreSQL), so every instance ends it at one time.
 */
export interface TtlCut {
  /** The earlier end: its time plus `ttl_minutes`. */
  readonly expires_at: string
  /** The expiry stored when it was given. */
  readonly given_until: string
  /** How long it was given for, in minutes (to a tenth). */
  readonly given_minutes: number
  /** The TTL the plan is held to now. */
  readonly ttl_minutes: number
}

/** The cut the TTL asked now makes to a stored approval, or null when it ends it no earlier than stored. */
export function ttlCutOf(approval: { readonly decided_at: string; readonly expires_at: string | null }, ttlMinutes: number): TtlCut | null {
  if (approval.expires_at === null) return null
  const decided = Date.parse(approval.decided_at)
  const stored = Date.parse(approval.expires_at)
  // a time that does not parse cannot be cut from: the stored expiry stands, as before
  if (!Number.isFinite(decided) || !Number.isFinite(stored)) return null
  const end = decided + ttlMinutes * 60_000
  if (end >= stored) return null
  return { expires_at: new Date(end).toISOString(), given_until: approval.expires_at, given_minutes: Math.round((stored - decided) / 6_000) / 10, ttl_minutes: ttlMinutes }
}

/**
 * Stores the cut as the approval's expiry. Judged from the running config alone, an approval refused as lapsed under
 * the shorter TTL ("a reviewer must approve it again") counted again once the TTL was put back up, and an instance still
 * on the longer TTL let it commit meanwhile; stored, the cut holds on every instance and for good. Only ever shortens.
 *
 * @example await storeTtlCut(db, entry.approval_id, cut)
 */
export async function storeTtlCut(db: Store['db'], approvalId: string, cut: TtlCut): Promise<void> {
  // the expiry it was given with is kept at the first cut: a refusal read later still names the cut (`storedCutOf`)
  await db
    .updateTable('approvals')
    .set((eb) => ({ expires_at: cut.expires_at, ttl_given_until: eb.fn.coalesce('ttl_given_until', eb.ref('expires_at')) }))
    .where('id', '=', approvalId)
    .where('expires_at', '>', cut.expires_at)
    .execute()
}

/** The cut an approval's stored expiry already holds (kept by `storeTtlCut`), or null when none was stored. */
export function storedCutOf(approval: { readonly decided_at: string; readonly expires_at: string | null; readonly ttl_given_until: string | null }): TtlCut | null {
  if (approval.expires_at === null || approval.ttl_given_until === null) return null
  const decided = Date.parse(approval.decided_at)
  const given = Date.parse(approval.ttl_given_until)
  const end = Date.parse(approval.expires_at)
  if (!Number.isFinite(decided) || !Number.isFinite(given) || !Number.isFinite(end) || end >= given) return null
  return { expires_at: approval.expires_at, given_until: approval.ttl_given_until, given_minutes: Math.round((given - decided) / 6_000) / 10, ttl_minutes: (end - decided) / 60_000 }
}

/** Why a lapsed approval lapsed before its stored expiry, in words, for the refusal: the TTL was cut, old and new. */
export function ttlCutSentence(entry: { readonly name: string | null; readonly principal: string; readonly decided_at: string; readonly ttl_cut: TtlCut }, resource: string): string {
  const cut = entry.ttl_cut
  return `resources.${resource}.approval.ttl_minutes was shortened to ${cut.ttl_minutes} since the approval by "${entry.name ?? entry.principal}" at ${entry.decided_at} was given for ${cut.given_minutes} minutes (until ${cut.given_until}), so it lapsed at ${cut.expires_at}`
}
