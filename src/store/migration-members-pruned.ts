import { sql, type Kysely } from 'kysely'

/**
 * When retention pruned a selection's members and exclusions (0021): the header row (id, digest, count, timestamps)
 * is kept forever, so audit rows and links still resolve, and every read of its members says they were pruned, and
 * when, instead of answering an empty list that would look complete. Null: its members are all still stored.
 * The partial index holds only the selections not yet pruned, by expiry: what a sweep looks through.
 */
export async function addMembersPruned(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('selections').addColumn('members_pruned_at', 'text').execute()
  await sql`create index selections_unpruned_expiry_idx on selections (expires_at) where members_pruned_at is null`.execute(db)
}
