import { sql, type Kysely } from 'kysely'

/**
 * The source each target's selection member was read from (`selection_members.source`), copied at commit: a
 * record's address is (source, id), so the executor re-reads and writes it on that source alone, never on
 * another source that holds the same id. Null for members frozen without one: those are still read and written
 * by id across the sources (0017).
 *
 * Targets committed before this migration take it from their member as the commit would have: the commit wrote
 * one target per member of its plan's selection (`operations.plan_id` → `plans.selection_id`; a compensation's
 * plan names its own selection), at the member's `ord`, with its `record_id`. Filled only where the member at
 * that ord holds the target's record id too; any other target keeps null (by id across the sources, as before).
 * One set-based statement, however many targets the store holds.
 */
export async function addTargetSource(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operation_targets').addColumn('source', 'text').execute()
  // PostgreSQL refuses a reference to the updated table inside the FROM list's joins: it is matched in WHERE
  await sql`
    update operation_targets set source = m.source
    from operations o
    join plans p on p.id = o.plan_id
    join selection_members m on m.selection_id = p.selection_id
    where o.id = operation_targets.operation_id
      and m.ord = operation_targets.ord
      and m.record_id = operation_targets.record_id
      and m.source is not null`.execute(db)
}
