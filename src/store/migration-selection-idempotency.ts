import type { Kysely } from 'kysely'

/**
 * A selection request may carry an idempotency key (scoped to its principal) and the fingerprint of the request it
 * came with: a retry with the same key answers that selection instead of walking the upstream again. The UNIQUE
 * index is what makes two requests sent at once with one key build one selection (the second insert finds the
 * first); rows without a key hold NULL, which both dialects let repeat. Rows from before this migration have none.
 */
export async function addSelectionIdempotencyKey(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('selections').addColumn('idempotency_key', 'text').execute()
  await db.schema.alterTable('selections').addColumn('request_fingerprint', 'text').execute()
  await db.schema.createIndex('selections_idempotency_key_uq').on('selections').column('idempotency_key').unique().execute()
}
