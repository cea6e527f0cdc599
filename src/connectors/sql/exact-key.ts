import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { ColumnFacts } from './column-types.js'
import { compileFilter } from './compile.js'
import type { ConnectorContext } from './context.js'
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
export function exactKey(ctx: ConnectorContext, field: string, value: string | number | bigint, facts: ColumnFacts | null): RawBuilder<SqlBool> {
  const plain = sql<SqlBool>`${sql.ref(field)} = ${value}`
  if (ctx.fields[field] !== 'string' || typeof value !== 'string') return plain
  if (facts?.misfits.some((m) => m.field === field)) return plain
  const options = facts === null ? {} : { comparedAsText: facts.comparedAsText, comparedByCodePoint: facts.comparedByCodePoint }
  const exact = compileFilter({ [field]: { eq: value } }, ctx.fields, ctx.dialect, field, options)
  // the text comparison alone is wider where the column keeps other types: a SQLite column of no type holds the
  // integer 1 beside the text '1', both "1" as text, and only its `=` tells them apart
  return exact === null ? plain : sql<SqlBool>`(${plain} and ${exact})`
}

/** The row's id is the target's exactly (`exactKey`). */
export function idMatch(ctx: ConnectorContext, id: string | number | bigint, facts: ColumnFacts | null): RawBuilder<SqlBool> {
  return exactKey(ctx, ctx.idField, id, facts)
}

/** The row is at the expected version: a string one exactly (`exactKey`), an integer or timestamp by `versionCondition`. */
export function versionMatch(ctx: ConnectorContext, expected: string | number, facts: ColumnFacts | null): RawBuilder<unknown> {
  return ctx.versionType === 'string' ? exactKey(ctx, ctx.versionField, expected, facts) : versionCondition(ctx, expected)
}
