import { sql, type RawBuilder, type SqlBool } from 'kysely'
import { clausesOf, instantOf, WarrantError, type Clause, type Filter, type Operator } from '../../contract/index.js'
import type { FieldType } from '../../config/index.js'
import type { SqlDialectName } from './url.js'

/** Declared field → type, as in `resource.fields`. */
export type FieldTypes = Readonly<Record<string, FieldType>>

type Scalar = string | number | boolean

const COMPARABLE: readonly Operator[] = ['eq', 'in', 'not_in', 'lt', 'lte', 'gt', 'gte', 'is_null']

/** Whether a page read on SQLite lets a value through this clause, to be judged in memory (see compileFilter). */
export function judgedInMemory(type: FieldType | undefined, op: Operator): boolean {
  return (type === 'number' || type === 'integer' || type === 'boolean' || type === 'timestamp') && op !== 'is_null'
}

/** toISOString's spelling, as a GLOB: the only text SQLite can order as the instants it names. */
const ISO_TEXT = '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'

/** Which operators each field type accepts. */
export const OPERATORS_BY_TYPE: Readonly<Record<FieldType, readonly Operator[]>> = {
  string: COMPARABLE,
  timestamp: COMPARABLE,
  number: COMPARABLE,
  integer: COMPARABLE,
  boolean: ['eq', 'in', 'not_in', 'is_null'],
  tags: ['contains', 'is_null'],
}

const EXPECTED: Readonly<Record<FieldType, string>> = {
  string: 'a string',
  timestamp: 'an ISO-8601 timestamp string (YYYY-MM-DD, or a date-time with Z or an offset)',
  number: 'a finite number',
  integer: 'an integer',
  boolean: 'true or false',
  tags: 'a string',
}

/** The declared type of `field`, or an invalid_request error naming it. */
export function fieldTypeOf(fields: FieldTypes, field: string, where: string): FieldType {
  const type = Object.hasOwn(fields, field) ? fields[field] : undefined
  if (type === undefined) {
    throw new WarrantError('invalid_request', `${where} uses field "${field}", which the resource does not declare`, { field })
  }
  return type
}

/** True when `value` is a valid value of a field of `type` (tags: one tag). */
export function isValueOfType(type: FieldType, value: unknown): value is Scalar {
  switch (type) {
    case 'string':
    case 'timestamp':
    case 'tags':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
  }
}

/**
 * A value as a query parameter for a column of `type`. SQLite has no boolean: 0/1. PostgreSQL gets explicit
 * numeric casts so an untyped parameter never has to be guessed from the column (exact ones: `numeric`). MySQL
 * gets timestamps as dates (a DATETIME literal in UTC): it does not read an ISO string's `Z`.
 */
export function paramOf(value: Scalar, type: FieldType, dialect: SqlDialectName): RawBuilder<unknown> {
  if (typeof value === 'boolean' && dialect === 'sqlite') return sql.val(value ? 1 : 0)
  // one spelling of the instant: SQLite compares the text, PostgreSQL would read a bare date in its session's zone
  if (type === 'timestamp' && typeof value === 'string') {
    const at = instantOf(value)
    if (at !== null) return dialect === 'mysql' ? sql.val(new Date(at)) : sql.val(new Date(at).toISOString())
  }
  // numeric, not double precision: a numeric or bigint column compared with a double is cast to one, and
  // 12345678901234567.89 equalled 12345678901234568, 2^53 + 1 equalled 2^53 (a float column still compares as
  // floats, on its index)
  if (dialect === 'postgres' && type === 'number') return sql`cast(${value} as numeric)`
  if (dialect === 'postgres' && type === 'integer') return sql`cast(${value} as bigint)`
  return sql.val(value)
}

/**
 * Compiles a filter to one parameterised boolean expression: every value is a parameter, every identifier is
 * quoted by kysely. Only declared fields; each operator must suit the field's type. `where` names the filter in
 * error messages ("filter", "precondition"). Returns null for `{}`.
 *
 * The semantics are those of `matchesFilter`: a NULL column matches no comparison, `not_in` and `contains`
 * included; strings compare by code point (PostgreSQL: `COLLATE "C"`).
 *
 * `comparedAsText`: string fields whose column holds numbers, compared as `cast(column as text)` (see
 * `ColumnFacts`). `judgedInMemory` (a page read on SQLite): a number, integer or boolean comparison also lets through a row
 * holding text there, a timestamp comparison one whose text is not toISOString's spelling, and `contains` one
 * whose tags are not a JSON list, for `createPageJudge` to judge; a write's precondition never does.
 *
 * @throws WarrantError('invalid_request') naming the field and operator.
 */
export function compileFilter(
  filter: Filter,
  fields: FieldTypes,
  dialect: SqlDialectName,
  where = 'filter',
  options: { readonly judgedInMemory?: boolean; readonly comparedAsText?: ReadonlyMap<string, boolean> } = {},
): RawBuilder<SqlBool> | null {
  const parts = clausesOf(filter).map((clause) => {
    const compiled = compileClause(clause, fields, dialect, where, options.comparedAsText?.get(clause.field))
    if (!options.judgedInMemory || dialect !== 'sqlite') return compiled
    // SQLite stores any value in any column and orders text above every number: a text value in a number or
    // boolean column passes here and is judged on its normalised value (page-judge.ts)
    const column = sql.ref(clause.field)
    // a timestamp stored in another spelling than toISOString's does not order as text the way instants do
    if (fields[clause.field] === 'timestamp' && clause.op !== 'is_null') return sql`(${compiled} or not (${column} glob ${ISO_TEXT}))`
    // a boolean is 0 or 1: a 2 is neither true nor false, and is judged too
    if (fields[clause.field] === 'boolean' && clause.op !== 'is_null') return sql`(${compiled} or (${column} is not null and (typeof(${column}) <> 'integer' or ${column} not in (0, 1))))`
    if (judgedInMemory(fields[clause.field], clause.op)) return sql`(${compiled} or typeof(${column}) in ('text', 'blob'))`
    // json_each fails the whole statement on text that is no JSON: such a row passes, unjudged (CASE tries its
    // conditions in order, so json_type never sees it)
    if (clause.op === 'contains') return sql`(case when not json_valid(${column}) then 1 when json_type(${column}) <> 'array' then 1 else ${compiled} end)`
    return compiled
  })
  if (parts.length === 0) return null
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`
}

function compileClause(clause: Clause, fields: FieldTypes, dialect: SqlDialectName, where: string, asText?: boolean): RawBuilder<unknown> {
  const { field, op } = clause
  const type = fieldTypeOf(fields, field, where)
  if (!OPERATORS_BY_TYPE[type].includes(op)) {
    throw new WarrantError(
      'invalid_request',
      `${where} on "${field}": operator "${op}" does not apply to a ${type} field (it accepts ${OPERATORS_BY_TYPE[type].join(', ')})`,
      { field, operator: op },
    )
  }
  const ref = sql.ref(field)
  const column = asText === undefined || type !== 'string' || op === 'is_null' || (asText && integerEquality(op, clause.value)) ? ref : sql`cast(${ref} as text)`
  if (op === 'is_null') {
    if (typeof clause.value !== 'boolean') throw mismatch(where, field, op, type, 'true or false')
    return clause.value ? sql`${column} is null` : sql`${column} is not null`
  }
  const values = Array.isArray(clause.value) ? clause.value : [clause.value as Scalar]
  for (const v of values) if (!isValueOfType(type, v)) throw mismatch(where, field, op, type, EXPECTED[type])
  if (type === 'timestamp' && values.some((v) => instantOf(v, true) === null)) {
    throw mismatch(where, field, op, type, EXPECTED[type])
  }
  if (dialect === 'mysql' && type === 'string') return compileMysqlString(column, op, values as string[])

  switch (op) {
    case 'contains': {
      const tag = values[0] as string
      if (dialect === 'sqlite') return sql`exists (select 1 from json_each(${column}) as je where je.value = ${tag})`
      if (dialect === 'mysql') return sql`json_contains(${column}, json_quote(${tag}))`
      return sql`(${column})::jsonb @> jsonb_build_array(cast(${tag} as text))`
    }
    case 'eq':
      return sql`${column} = ${paramOf(values[0]!, type, dialect)}`
    case 'in':
      return sql`${column} in (${sql.join(values.map((v) => paramOf(v, type, dialect)))})`
    case 'not_in':
      return sql`${column} not in (${sql.join(values.map((v) => paramOf(v, type, dialect)))})`
    default: {
      // Strings order by code point on both dialects, as in JavaScript; the database's collation may not.
      const left = dialect === 'postgres' && type === 'string' ? sql`cast(${column} as text) collate "C"` : column
      const symbol = op === 'lt' ? sql.raw('<') : op === 'lte' ? sql.raw('<=') : op === 'gt' ? sql.raw('>') : sql.raw('>=')
      return sql`${left} ${symbol} ${paramOf(values[0]!, type, dialect)}`
    }
  }
}

/**
 * Whether a string equality on an integer column may stay a plain comparison (on the column's index): every value
 * is an integer's own digits, which an integer equals exactly when its text does. Anything else ("02134", an
 * order) compares `cast(column as text)`, the text a record shows (see `ColumnFacts.comparedAsText`).
 */
function integerEquality(op: Operator, value: Clause['value']): boolean {
  if (op !== 'eq' && op !== 'in' && op !== 'not_in') return false
  return (Array.isArray(value) ? value : [value]).every((v) => typeof v === 'string' && INTEGER_DIGITS.test(v))
}

const INTEGER_DIGITS = /^(0|-?[1-9][0-9]{0,14})$/

/**
 * MySQL compares strings by the column's collation, often case- and trailing-space-insensitive; the filter's
 * semantics are exact, by code point. UTF-8 bytes order as code points do, so both sides compare as bytes.
 * Equality keeps a plain `=` / `in` beside it so an index on the column still narrows the rows.
 */
function compileMysqlString(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>, op: Operator, values: readonly string[]): RawBuilder<unknown> {
  const bytes = (value: unknown) => sql`cast(convert(${value} using utf8mb4) as binary)`
  const list = (wrap: (v: string) => unknown) => sql.join(values.map(wrap))
  switch (op) {
    case 'eq':
      return sql`(${column} = ${values[0]} and ${bytes(column)} = ${bytes(values[0])})`
    case 'in':
      return sql`(${column} in (${list((v) => v)}) and ${bytes(column)} in (${list((v) => bytes(v))}))`
    case 'not_in':
      return sql`${bytes(column)} not in (${list((v) => bytes(v))})`
    default: {
      const symbol = op === 'lt' ? sql.raw('<') : op === 'lte' ? sql.raw('<=') : op === 'gt' ? sql.raw('>') : sql.raw('>=')
      return sql`${bytes(column)} ${symbol} ${bytes(values[0])}`
    }
  }
}

function mismatch(where: string, field: string, op: Operator, type: FieldType, expected: string): WarrantError {
  return new WarrantError('invalid_request', `${where} on "${field}": operator "${op}" on a ${type} field expects ${expected}`, {
    field,
    operator: op,
  })
}
