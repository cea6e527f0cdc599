import type { Kysely } from 'kysely'

/**
 * How many times the upstream answered a target "not now" (429, or a read's 503 with Retry-After): the count
 * `max_rate_limit_retries` bounds. Kept on the target's row, not only in the executor's memory, so an executor
 * resuming the operation (a restart, a takeover) goes on counting: an upstream answering 429 forever, with a
 * restart now and then, otherwise never halted the operation. 0 for rows written before this migration (0015).
 */
export async function addTargetRateLimits(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operation_targets').addColumn('rate_limit_hits', 'integer', (c) => c.notNull().defaultTo(0)).execute()
}
