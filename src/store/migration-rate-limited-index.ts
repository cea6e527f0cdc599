import { sql, type Kysely } from 'kysely'

/**
 * The targets an upstream throttled, found without reading the others: every view of an operation (the API, MCP,
 * the CLI, the page's 2-second poll) sums `rate_limit_hits` over them, and by the primary key that sum read every
 * target row of the operation (about 30 ms for 200,000 targets on SQLite, the event loop held each time). A
 * partial index holds only rows with a hit, so the sum costs what the operation was throttled, usually nothing.
 */
export async function addRateLimitedTargetIndex(db: Kysely<any>): Promise<void> {
  await sql`create index operation_targets_rate_limited_idx on operation_targets (operation_id, ord) where rate_limit_hits > 0`.execute(db)
}
