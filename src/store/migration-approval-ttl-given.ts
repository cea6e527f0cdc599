import type { Kysely } from 'kysely'

/**
 * The expiry an approval was given with, kept when a shortened `approval.ttl_minutes` first cuts it (0019): the cut is
 * stored as its expiry, so a refusal read later (on another instance, after a gateway recorded the cut at its start)
 * still says it lapsed under the cut, given for how long. Null: never cut, or cut before this column existed.
 */
export async function addApprovalTtlGiven(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('ttl_given_until', 'text').execute()
}
