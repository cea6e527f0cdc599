import { sameFieldValue } from '../../contract/index.js'
import type { SourceRecord, WriteRequest } from '../connector.js'
import type { ConnectorContext } from './context.js'

/**
 * What the row as the UPDATE left it (read back, or `RETURNING` where that is final), before COMMIT, holds that no
 * reviewer approved, said as why the write is refused; undefined when nothing. The one rule of every engine (MySQL,
 * PostgreSQL, SQLite), judged wherever the engine can still roll back: a set field the row does not hold as approved
 * (`keptOtherwise`), else a field outside the set that moved (`touchedOutsideSet`).
 */
export function unapprovedChange(ctx: ConnectorContext, request: WriteRequest, after: SourceRecord): string | undefined {
  return keptOtherwise(ctx, request, after) ?? touchedOutsideSet(ctx, request, after)
}

/**
 * A set field the row does not hold as approved, said as why the write is refused; undefined when every one does.
 * MySQL and MariaDB keep some values otherwise without failing the UPDATE (a DECIMAL(10,2) rounds 1.234, a CHAR drops
 * trailing spaces, a DATETIME cuts milliseconds; without STRICT in sql_mode a value too long is cut), and on every
 * engine a BEFORE UPDATE trigger may rewrite a set column (lowercase a status, clamp a number): committed, the record
 * would hold a value no one approved, which the executor's effect check would find only once it was in the table.
 * Compared as that check compares (`sameFieldValue`): JSON whatever its key order, a timestamp by instant, a number
 * by value, so a value only spelled otherwise (1.50 for 1.5) is no refusal.
 */
function keptOtherwise(ctx: ConnectorContext, request: WriteRequest, record: SourceRecord): string | undefined {
  for (const [field, asked] of Object.entries(request.set)) {
    const kept = record.fields[field] ?? null
    if (sameFieldValue(kept, asked, ctx.fields[field])) continue
    return `column "${field}" of record "${request.id}" would hold ${show(kept)} where ${show(asked)} was asked: the table keeps the value otherwise (the column's type, a trigger, or on MySQL the server's sql_mode); committed, the record would hold what no one approved; store a value the table keeps as it is, or change the column or the trigger`
  }
  return undefined
}

/**
 * A field outside the write's set that the row as the UPDATE left it (read back, or `RETURNING` where that is final),
 * before COMMIT, holds otherwise than the record re-read just before the write (`request.current`), said as why the
 * write is refused; undefined when every one is as it was, or with no record to compare with. The set fields, the
 * version, the `updated_at` the connector stamps and the paths the plan lets the write change (`request.mayChange`:
 * the action's `write.may_change`) are the write's own. Anything else moved by the UPDATE (a BEFORE UPDATE trigger
 * rewriting a column, a generated column over a set one, an `ON UPDATE` column) is a value no reviewer approved:
 * committed, the executor would halt only after it was in the table. Compared as the executor judges a record
 * (`sameFieldValue`).
 */
export function touchedOutsideSet(ctx: ConnectorContext, request: WriteRequest, after: SourceRecord): string | undefined {
  const before = request.current
  if (before === undefined) return undefined
  const exempt = ownFields(ctx, request)
  const changed: string[] = []
  for (const [field, was] of Object.entries(before.fields)) {
    if (exempt(field) || !Object.hasOwn(after.fields, field)) continue
    const now = after.fields[field] ?? null
    if (sameFieldValue(now, was ?? null, ctx.fields[field])) continue
    changed.push(`"${field}"`)
  }
  if (changed.length === 0) return undefined
  return `the UPDATE of record "${request.id}" changed ${changed.join(', ')}, which the action does not set (a trigger, a generated column or an ON UPDATE column of the table, or another writer that left the version as it was; values are not quoted): committed, the record would hold what no one approved; set that field in the action, name it in the action's write.may_change if the table moves it on every write, or change the table`
}

/**
 * Whether a write that `RETURNING` could answer on its own, autocommitted, must rather be judged before COMMIT: a
 * generated column (`generatedFields`) outside its own fields may move with it, and there is a record to compare
 * with. Where nothing but the set moves a row, nothing is sent beyond the UPDATE.
 */
export function mayTouchOutsideSet(ctx: ConnectorContext, request: WriteRequest, generatedFields: readonly string[] | undefined): boolean {
  if (request.current === undefined || generatedFields === undefined || generatedFields.length === 0) return false
  const exempt = ownFields(ctx, request)
  return generatedFields.some((field) => !exempt(field))
}

/** The fields a write may move: its set, the id, the version, the `updated_at` the connector stamps and `request.mayChange`. */
function ownFields(ctx: ConnectorContext, request: WriteRequest): (field: string) => boolean {
  const mayChange = new Set((request.mayChange ?? []).map((path) => path.split('.')[0]!))
  const stamped = ctx.fields.updated_at === 'timestamp'
  return (field) => Object.hasOwn(request.set, field) || mayChange.has(field) || field === ctx.versionField || field === ctx.idField || (stamped && field === 'updated_at')
}

/** A value as a refusal quotes it: its JSON. */
function show(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
