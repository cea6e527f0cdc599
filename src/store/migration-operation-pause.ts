import type { Kysely } from 'kysely'

/**
 * A running operation paused because an upstream asked it to wait (429 with Retry-After): until when, and why
 * (JSON: the upstream's message, the target, since when). On the row, not only in the executor's memory, so
 * every instance's view says it is paused, and an executor resuming it after a restart waits out the rest.
 * Null when no pause holds.
 */
export async function addOperationPause(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operations').addColumn('paused_until', 'text').execute()
  await db.schema.alterTable('operations').addColumn('pause_reason', 'text').execute()
}
