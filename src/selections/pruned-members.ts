import type { Kysely } from 'kysely'
import { WarrantError } from '../contract/index.js'
import type { Database } from '../store/index.js'

/** Who prunes members: the retention sweep is the only deleter; said in every refusal so a reader knows it was policy, not loss. */
export const PRUNED_BY = 'retention'

/** What a refusal on a pruned selection carries: enough of the kept header to tell which selection it was. */
export interface PrunedHeader {
  readonly id: string
  readonly members_pruned_at: string
  readonly expires_at: string
  readonly count: number | string
  readonly digest: string
}

/**
 * 410 `expired`, reason `members_pruned`: the members of a selection retention pruned are gone, and an empty page would
 * read as a complete answer of no records. The header (count, digest) is kept and said, so what was reviewed is known.
 */
export function prunedMembers(header: PrunedHeader): WarrantError {
  return new WarrantError(
    'expired',
    `the members of selection ${header.id} were pruned by ${PRUNED_BY} at ${header.members_pruned_at} (it expired at ${header.expires_at}); its ${Number(header.count)} records are no longer stored, only its count and digest (${header.digest}): create a new selection`,
    { selection_id: header.id, reason: 'members_pruned', pruned_by: PRUNED_BY, pruned_at: header.members_pruned_at, expires_at: header.expires_at, count: Number(header.count), digest: header.digest },
  )
}

/** Refuses a selection record whose members were pruned; anything reading its members or exclusions asks first. */
export function assertMembersKept(selection: { readonly selection_id: string; readonly members_pruned_at?: string | null; readonly expires_at: string; readonly count: number; readonly digest: string }): void {
  if (selection.members_pruned_at) throw prunedMembers({ ...selection, id: selection.selection_id, members_pruned_at: selection.members_pruned_at })
}

/**
 * Refuses when the selection's members were pruned: asked by a member read that came back short (the end of a walk, or
 * a selection pruned before or during it), so a walk over them never ends early and looks whole. One point lookup.
 */
export async function refuseIfPruned(db: Kysely<Database>, selectionId: string): Promise<void> {
  const row = await db.selectFrom('selections').select(['id', 'members_pruned_at', 'expires_at', 'count', 'digest']).where('id', '=', selectionId).executeTakeFirst()
  if (row?.members_pruned_at) throw prunedMembers({ ...row, members_pruned_at: row.members_pruned_at })
}
