import type { Kysely } from 'kysely'

/**
 * Where a selection's members were read from: the digest of its resource's connector (base URLs, database and table;
 * never a credential) when it was frozen. The environment it keeps is a label; a connector pointed elsewhere since
 * must not have plans proposed on members read from the other place. Rows from before this migration (0010) have none and
 * are judged by their environment label alone, as before.
 */
export async function addSelectionUpstreamDigest(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('selections').addColumn('upstream_digest', 'text').execute()
}
