import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { ColumnFacts } from './column-types.js'
import { compileFilter } from './compile.js'
import type { ConnectorContext } from './context.js'
import { textParam } from './mysql-charsets.js'
import { serverIdBinding } from './server-id-forms.js'
import { sqliteExactIds, sqliteIdsIn } from './sqlite-id-forms.js'
import { keyArrayType } from './key-arrays.js'
import { versionCondition } from './version.js'

/**
 * The condition that a row's id or version is `value` exactly, as a record shows it. The engine's own `=` is not
 * always that: SQLite's COLLATE NOCASE, PostgreSQL's citext or a non-deterministic collation, a MySQL/MariaDB
 * case-insensitive PAD SPACE collation find "A" for "a" and "x" for "x ", and PostgreSQL reads a uuid in capitals
 * as the lower-case one. A write to a target whose row is gone would then change the row stored under the other
 * spelling, which no reviewer named; one expecting version "abc" would overwrite the change that moved the row to
 * "ABC", unseen. A string field compares as a filter on it does (`compileFilter`: SQLite under BINARY, MySQL as
 * bytes, PostgreSQL as text under "C" where its `=` is not code-point equality or the column holds no text), and by
 * the column's own `=` as well: only that tells a SQLite integer 1 from the text '1', and its index finds the row.
 * Other fields, and a string field over a column it misfits, stay the plain `=`: the rows a write reads back are
 * checked for the id as well (write.ts).
 */
export function exactKey(ctx: ConnectorContext, field: string, value: string | number | bigint, facts: ColumnFacts | null, param: unknown = value): RawBuilder<SqlBool> {
  const narrow = typeof value === 'string' ? facts?.narrowText?.get(field) : undefined
  const plain = sql<SqlBool>`${sql.ref(field)} = ${textParam(param, narrow)}`
  if (ctx.fields[field] !== 'string' || typeof value !== 'string') return plain
  if (facts?.misfits.some((m) => m.field === field)) return plain
  const options = facts === null ? {} : { comparedAsText: facts.comparedAsText, comparedByCodePoint: facts.comparedByCodePoint, narrowText: facts.narrowText }
  const exact = compileFilter({ [field]: { eq: value } }, ctx.fields, ctx.dialect, field, options)
  // the text comparison alone is wider where the column keeps other types: a SQLite column of no type holds the
  // integer 1 beside the text '1', both "1" as text, and only its `=` tells them apart
  return exact === null ? plain : sql<SqlBool>`(${plain} and ${exact})`
}

/**
 * The row's id is the target's exactly, as a record shows it (`exactKey`; on SQLite `sqliteExactIds`, whose
 * columns keep one id in several storage classes). Elsewhere the id is bound by the column's type
 * (`serverIdBinding`), and over a text column compared as a string id is, whatever the id is declared: a number
 * id "1.0" names the text '1.0' only. `id` is one the table admits (`idRefusal` null).
 */
export function idMatch(ctx: ConnectorContext, id: string, facts: ColumnFacts | null): RawBuilder<SqlBool> {
  if (ctx.dialect === 'sqlite') return sqliteExactIds(ctx.idField, [id])
  const bound = serverIdBinding(ctx, id, facts?.idColumn)
  if ('refusal' in bound) return sql<SqlBool>`1 = 0`
  const plain = sql<SqlBool>`${sql.ref(ctx.idField)} = ${bound.param}`
  const column = facts?.idColumn
  if (bound.exact) return plain
  if (column === null || column === undefined || (column.kind !== 'text' && column.kind !== 'numeric')) return exactKey(ctx, ctx.idField, id, facts, bound.param)
  // compared as the text a record shows, whatever the id is declared: the engine's `=` finds "1.00" for a number id
  // "1.0", "A" for "a" under a case-insensitive collation, a row a write must not take for the one named
  const pgText = ctx.dialect === 'postgres'
  const exact = compileFilter({ [ctx.idField]: { eq: id } }, { ...ctx.fields, [ctx.idField]: 'string' }, ctx.dialect, ctx.idField, {
    comparedAsText: pgText && column.kind !== 'text' ? new Map([[ctx.idField, column.integer]]) : undefined,
    comparedByCodePoint: pgText && !column.codePointEquality ? new Set([ctx.idField]) : undefined,
    narrowText: column.narrowText ? new Map([[ctx.idField, column.narrowText]]) : undefined,
  })
  return sql<SqlBool>`(${plain} and ${exact!})`
}

/**
 * Why no row could be the record `id` names, or null when one could: on SQLite any id may be (any column there keeps
 * any text: an integer id over a TEXT column holding '1.0' is shown as "1.0"); elsewhere by the id column's type
 * (`serverIdBinding`). A refused id is failed, never missing: the column's type rules it out, not the table.
 */
export function idRefusal(ctx: ConnectorContext, id: string, facts: ColumnFacts | null): string | null {
  if (ctx.dialect === 'sqlite') return null
  const bound = serverIdBinding(ctx, id, facts?.idColumn)
  return 'refusal' in bound ? bound.refusal : null
}

/**
 * The rows the engine's own comparison finds for `ids` (each one admitted: `idRefusal` null), on the column's
 * index: on SQLite in every form the column may keep them (`sqliteIdsIn`). Wider than the ids where the engine's
 * `=` is (a case-insensitive collation, digits read as a number): the caller tells the rows apart by the id each shows.
 */
export function idsIn(ctx: ConnectorContext, ids: readonly string[], facts: ColumnFacts | null): RawBuilder<SqlBool> {
  if (ctx.dialect === 'sqlite') return sqliteIdsIn(ctx.idField, ids)
  const type = keyArrayType(ctx, facts?.idColumn)
  const params = ids.flatMap((id) => {
    const bound = serverIdBinding(ctx, id, facts?.idColumn)
    return 'refusal' in bound ? [] : [type === null ? bound.param : id]
  })
  if (params.length === 0) return sql<SqlBool>`1 = 0`
  // one array parameter where the column's `=` against its elements is its `=` against each id (key-arrays.ts): the
  // same text for any number of ids; an integer's digits ("007") read as the integer, as the bound parameter was
  if (type !== null) return sql<SqlBool>`${sql.ref(ctx.idField)} = any(cast(${params} as ${sql.raw(type)}[]))`
  return sql<SqlBool>`${sql.ref(ctx.idField)} in (${sql.join(params)})`
}

/** The row is at the expected version: a string one exactly (`exactKey`), an integer or timestamp by `versionCondition`. */
export function versionMatch(ctx: ConnectorContext, expected: string | number | bigint, facts: ColumnFacts | null): RawBuilder<unknown> {
  return ctx.versionType === 'string' ? exactKey(ctx, ctx.versionField, expected, facts) : versionCondition(ctx, expected, facts?.versionColumn?.zoneless === true)
}
