import type { Kysely } from 'kysely'

/**
 * Who is building a selection, until when that is known to be alive, and why a selection never finished. A builder
 * renews `lease_until` while it walks; a `building` row whose builder is gone (a process of this machine that no
 * longer runs, or a lease past its end) can never be finished, so any process marks it `failed` with `failure` and
 * removes its members. Rows from before this migration have neither: they are taken for abandoned once expired.
 */
export async function addSelectionBuilder(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('selections').addColumn('builder', 'text').execute()
  await db.schema.alterTable('selections').addColumn('lease_until', 'text').execute()
  await db.schema.alterTable('selections').addColumn('failure', 'text').execute()
}
