import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { ColumnFacts, ColumnType } from './column-types.js'
import type { ConnectorContext } from './context.js'

/**
 * A window's ids (and versions) as one array parameter each, on PostgreSQL: the statement's text is then the same
 * for any number of ids, so it is built once per change rather than one `(id = $n and version = $m)` piece per
 * target (~14 µs a target in kysely), and the server parses the same short text each time, not 128 parameters of
 * OR. Only where the column's own `=` against the array's element type is the same comparison the piece made:
 *
 * - a text column whose `=` is code-point equality (text, varchar, name, a domain over one, under a deterministic
 *   collation: `ColumnType.codePointEquality`) against `text[]`: the piece's exact comparison is that `=` itself;
 * - an integer column (smallint, integer, bigint) against `bigint[]`.
 *
 * Anything else (char(n), citext, a non-deterministic collation, uuid, numeric, a date) keeps the per-id pieces,
 * whose casts and exact comparisons know it (`idMatch`, `idsIn`); so does a window where the catalogue is unknown.
 */
export function keyArrayType(ctx: ConnectorContext, column: ColumnType | null | undefined): 'text' | 'bigint' | null {
  if (ctx.dialect !== 'postgres' || column === null || column === undefined) return null
  if (column.kind === 'text' && column.codePointEquality && !column.narrowText) return 'text'
  if (column.kind === 'numeric' && column.integer) return 'bigint'
  return null
}

/** An integer id whose digits are the ones the row shows ("7", never "007", "+7" or "-0"): the integer's `=` is then exact. */
const CANONICAL_INTEGER = /^(0|-?[1-9]\d*)$/

/**
 * The rows at exactly these ids and integer versions, as one condition of constant text (`keyArrayType`):
 * `(id, version) in (select * from unnest($ids::<type>[], $versions::bigint[]))`, the same as
 * `(id = $ and version = cast($ as bigint)) or …` for each pair (`idMatch`, `versionMatch`), a semi-join: a row is
 * written once whichever pair it matches. Null where that cannot be said so: another engine, another version type,
 * an id column of another type, or an integer id spelled otherwise than its row shows it (the piece compares those
 * as text, and finds no row).
 */
export function windowKeysMatch(ctx: ConnectorContext, facts: ColumnFacts | null, pairs: readonly { readonly id: string; readonly expected: string | number }[]): RawBuilder<SqlBool> | null {
  if (ctx.versionType !== 'integer') return null
  const type = keyArrayType(ctx, facts?.idColumn)
  if (type === null) return null
  if (type === 'bigint' && !pairs.every((p) => CANONICAL_INTEGER.test(p.id))) return null
  if (!pairs.every((p) => typeof p.expected === 'number')) return null
  const ids = pairs.map((p) => p.id)
  const versions = pairs.map((p) => p.expected)
  return sql<SqlBool>`(${sql.ref(ctx.idField)}, ${sql.ref(ctx.versionField)}) in (select * from unnest(cast(${ids} as ${sql.raw(type)}[]), cast(${versions} as bigint[])))`
}
