import { sql, type CompiledQuery, type Kysely } from 'kysely'
import { catalogueName } from './column-types.js'
import type { SqlDialectName } from './url.js'

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
 */
export function updateTriggersQuery(dialect: SqlDialectName, db: Kysely<any>, table: string): CompiledQuery {
  const { schema, name, regclass } = catalogueName(table)
  if (dialect === 'sqlite') {
    return sql`select name from ${sql.id(schema ?? 'main', 'sqlite_master')}
      where type = 'trigger' and tbl_name = ${name} collate nocase and sql like '%update%'`.compile(db)
  }
  if (dialect === 'postgres') {
    return sql`select tgname as name from pg_trigger where tgrelid = to_regclass(${regclass}) and not tgisinternal and (tgtype & 16) <> 0
      union all select rulename from pg_rewrite where ev_class = to_regclass(${regclass}) and ev_type = '2'
      union all select relname from pg_class where oid = to_regclass(${regclass}) and relkind <> 'r'`.compile(db)
  }
  return sql`select trigger_name as name from information_schema.triggers
    where event_object_schema = coalesce(${schema}, database()) and event_object_table = ${name} and event_manipulation = 'UPDATE'`.compile(db)
}
