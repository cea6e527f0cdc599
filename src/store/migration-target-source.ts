import type { Kysely } from 'kysely'

/**
 * The source each target's selection member was read from (`selection_members.source`), copied at commit: a
 * record's address is (source, id), so the executor re-reads and writes it on that source alone, never on
 * another source that holds the same id. Null for targets committed before this migration (and members frozen
 * without one): those are still read and written by id across the sources (0017).
 */
export async function addTargetSource(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operation_targets').addColumn('source', 'text').execute()
}
