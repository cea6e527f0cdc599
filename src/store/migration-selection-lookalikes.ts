import type { Kysely } from 'kysely'

/**
 * A selection's record ids drawn alike (0013), found while its members were written: they never change once frozen,
 * so every view, in every process and after a restart, reads them instead of walking every member again. Rows from
 * before this migration have none (null); the first view walks their members once and stores what it found.
 */
export async function addSelectionLookalikeIds(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('selections').addColumn('lookalike_ids', 'text').execute()
}
