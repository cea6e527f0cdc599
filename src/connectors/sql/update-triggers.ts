import { sql, type CompiledQuery, type Kysely } from 'kysely'
import { catalogueName } from './column-types.js'
import type { Row } from './backend.js'
import type { SqlDialectName } from './url.js'

/** What the catalogue shows may move a column of a row besides the values an UPDATE sets (see `updateTriggersQuery`). */
export interface UpdateEffects {
  /**
   * Something may change a row after the UPDATE statement computed its `RETURNING` (a trigger, a rule, a view): a
   * write's answer must then be the row read back in the UPDATE's transaction.
   */
  readonly changedAfterUpdate: boolean
  /**
   * Declared fields over generated columns (PostgreSQL's and SQLite's `GENERATED ALWAYS AS`), which an UPDATE of
   * another column moves within the statement (its `RETURNING` shows them): a write that may move one outside its
   * set is judged before COMMIT (`untouched-fields.ts`), never autocommitted.
   */
  readonly generatedFields: readonly string[]
}

/** The rows of `updateTriggersQuery` as facts about the declared fields. */
export function updateEffectsOf(rows: readonly Row[], fields: Readonly<Record<string, unknown>>): UpdateEffects {
  const generated = rows.filter((row) => row.kind === 'generated').map((row) => String(row.name))
  return { changedAfterUpdate: generated.length < rows.length, generatedFields: generated.filter((name) => Object.hasOwn(fields, name)) }
}

/**
 * The query that names what may change a row of the table after an UPDATE statement computed its `RETURNING`;
 * any row it returns means a write's answer must be read back. SQLite's and PostgreSQL's `RETURNING` shows a
 * row before AFTER triggers run (SQLite: it "does not reflect any subsequent value changes made by triggers";
 * PostgreSQL fires AFTER ROW triggers at the statement's end), so a trigger that puts a value back would leave
 * a write answering values the row does not hold.
 *
 * - SQLite: a trigger on the table whose text says UPDATE (a trigger only on INSERT or DELETE that updates
 *   another row is counted too: it costs a read back, never a wrong answer).
 * - PostgreSQL: a user trigger on UPDATE (tgtype bit 16), a rule on UPDATE, or a relation that is not a plain
 *   table (a view, whose base table's triggers fire; a partitioned table, whose partitions may have triggers
 *   of their own).
 * - MySQL/MariaDB: triggers on UPDATE; they cannot change the row being updated, and that backend reads every
 *   write back anyway, so the answer there is only for completeness.
 *
 * On SQLite and PostgreSQL it also names the generated columns (rows of kind 'generated'), which do not change the
 * row after `RETURNING` but may move a field the write does not set (`UpdateEffects.generatedFields`).
 */
export function updateTriggersQuery(dialect: SqlDialectName, db: Kysely<any>, table: string): CompiledQuery {
  const { schema, name, regclass } = catalogueName(table)
  if (dialect === 'sqlite') {
    return sql`select name, 'trigger' as kind from ${sql.id(schema ?? 'main', 'sqlite_master')}
      where type = 'trigger' and tbl_name = ${name} collate nocase and sql like '%update%'
      union all select name, 'generated' from pragma_table_xinfo(${name}, ${schema ?? 'main'}) where hidden in (2, 3)`.compile(db)
  }
  if (dialect === 'postgres') {
    // attgenerated read through to_jsonb: before PostgreSQL 12 there is no such column (and no generated column)
    return sql`select tgname as name, 'trigger' as kind from pg_trigger where tgrelid = to_regclass(${regclass}) and not tgisinternal and (tgtype & 16) <> 0
      union all select rulename, 'rule' from pg_rewrite where ev_class = to_regclass(${regclass}) and ev_type = '2'
      union all select relname, 'relation' from pg_class where oid = to_regclass(${regclass}) and relkind <> 'r'
      union all select attname, 'generated' from pg_attribute a where attrelid = to_regclass(${regclass}) and attnum > 0 and not attisdropped
        and coalesce(to_jsonb(a) ->> 'attgenerated', '') <> ''`.compile(db)
  }
  return sql`select trigger_name as name from information_schema.triggers
    where event_object_schema = coalesce(${schema}, database()) and event_object_table = ${name} and event_manipulation = 'UPDATE'`.compile(db)
}
