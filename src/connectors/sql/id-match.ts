import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { ColumnFacts } from './column-types.js'
import { compileFilter } from './compile.js'
import type { ConnectorContext } from './context.js'

/**
 * The condition naming the row a write is for: its id is the target's exactly, as a record shows it. The engine's
 * own `=` is not always that: SQLite's COLLATE NOCASE, PostgreSQL's citext or a non-deterministic collation, a
 * MySQL/MariaDB case-insensitive PAD SPACE collation find "A" for "a" and "x" for "x ", and PostgreSQL reads a uuid
 * in capitals as the lower-case one. A target whose row is gone would then write the row stored under the other
 * spelling, which no reviewer named. A string id compares as a filter on it does (`compileFilter`: SQLite under
 * BINARY, MySQL as bytes, PostgreSQL as text under "C" where its `=` is not code-point equality or the column holds
 * no text), and by the key's own `=` as well: only that tells a SQLite integer 1 from the text '1', and its index
 * finds the row. Other ids, and a string id over a column it misfits, stay the plain `=`: the rows a write reads
 * back are checked for the id as well (write.ts).
 */
export function idMatch(ctx: ConnectorContext, id: string | number | bigint, facts: ColumnFacts | null): RawBuilder<SqlBool> {
  const plain = sql<SqlBool>`${sql.ref(ctx.idField)} = ${id}`
  if (ctx.idType !== 'string' || typeof id !== 'string') return plain
  if (facts?.misfits.some((m) => m.field === ctx.idField)) return plain
  const options = facts === null ? {} : { comparedAsText: facts.comparedAsText, comparedByCodePoint: facts.comparedByCodePoint }
  const exact = compileFilter({ [ctx.idField]: { eq: id } }, ctx.fields, ctx.dialect, 'id', options)
  // the text comparison alone is wider where the column keeps other types: a SQLite column of no type holds the
  // integer 1 beside the text '1', both "1" as text, and only its `=` tells them apart
  return exact === null ? plain : sql<SqlBool>`(${plain} and ${exact})`
}
