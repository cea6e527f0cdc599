import { sql, type RawBuilder, type SqlBool } from 'kysely'
import { clausesOf, instantOf, WarrantError, type Clause, type Filter, type Operator } from '../../contract/index.js'
import type { FieldType } from '../../config/index.js'
import { textParam, type NarrowText } from './mysql-charsets.js'
import { mysqlNumberParam } from './mysql-decimals.js'
import type { ShownAs } from './column-types.js'
import type { SqlDialectName } from './url.js'
import { heldOnlyWhenJudged, letThrough, namingNoDay } from './unjudged-values.js'

/** Declared field → type, as in `resource.fields`. */
export type FieldTypes = Readonly<Record<string, FieldType>>

type Scalar = string | number | boolean

const COMPARABLE: readonly Operator[] = ['eq', 'in', 'not_in', 'lt', 'lte', 'gt', 'gte', 'is_null']

/**
 * Whether a page read lets values through this clause, to be judged in memory (see compileFilter): any clause
 * but `is_null` on a field whose column can hold values of another type (`looseFieldsOf`).
 */
export function judgedInMemory(clause: Clause, loose: ReadonlySet<string>): boolean {
  return clause.op !== 'is_null' && loose.has(clause.field)
}

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
  // MySQL reads 1e+21 as a double, and compared a DECIMAL with it as doubles: sent as the decimal it names
  if (dialect === 'mysql' && type === 'number' && typeof value === 'number') return mysqlNumberParam(value)
  return sql.val(value)
}

/**
 * Compiles a filter to one parameterised boolean expression: every value is a parameter, every identifier is
 * quoted by kysely. Only declared fields; each operator must suit the field's type. `where` names the filter in
 * error messages ("filter", "precondition"). Returns null for `{}`.
 *
 * The semantics are those of `matchesFilter`: a NULL column matches no comparison, `not_in` and `contains`
 * included; strings compare by code point (PostgreSQL orders by `COLLATE "C"`; MySQL compares bytes; SQLite under BINARY).
 *
 * `narrowText`: string fields over a MySQL column of a narrower character set than utf8mb4 (`textParam`).
 * `comparedAsShown`: number fields over a MySQL FLOAT or YEAR or a PostgreSQL real, compared as a record shows them (see `ColumnFacts`).
 * `comparedAsText`: string fields whose column holds numbers, compared as `cast(column as text)` (see
 * `ColumnFacts`). `comparedByCodePoint`: string fields whose column's `=` is not code-point equality (PostgreSQL
 * char(n), citext, a non-deterministic collation), compared as `cast(column as text) collate "C"` too.
 * `judgedInMemory` (a page read): the fields whose column can hold values of another type than
 * declared (every column on SQLite, see `looseFieldsOf`); a clause on one also lets through the rows whose value
 * it cannot judge, for `createPageJudge` to count or recheck: a number or boolean stored as text, a boolean that
 * is neither 0 nor 1, a timestamp not in toISOString's spelling or (`zeroDates`) a MySQL date naming no day, tags
 * that are not a JSON list. A write's precondition never does; there a clause on a `zeroDates` field does not hold
 * on a date naming no day, nor one on a `heldOnlyWhenJudged` field (a precondition's: `looseFieldsOf`) on a value
 * the SQL cannot judge (`unjudgeable`).
 *
 * @throws WarrantError('invalid_request') naming the field and operator.
 */
export function compileFilter(
  filter: Filter,
  fields: FieldTypes,
  dialect: SqlDialectName,
  where = 'filter',
  options: {
    readonly judgedInMemory?: ReadonlySet<string>
    readonly comparedAsText?: ReadonlyMap<string, boolean>
    readonly comparedByCodePoint?: ReadonlySet<string>
    readonly zeroDates?: ReadonlySet<string>
    readonly comparedAsShown?: ReadonlyMap<string, ShownAs>
    readonly narrowText?: ReadonlyMap<string, NarrowText>
    readonly heldOnlyWhenJudged?: ReadonlySet<string>
  } = {},
): RawBuilder<SqlBool> | null {
  const parts = clausesOf(filter).map((clause) => {
    const loose = options.judgedInMemory !== undefined && judgedInMemory(clause, options.judgedInMemory)
    const exact = options.comparedByCodePoint?.has(clause.field) === true
    const compiled = compileClause(clause, fields, dialect, where, {
      asText: options.comparedAsText?.get(clause.field),
      loose,
      exact,
      shown: options.comparedAsShown?.get(clause.field),
      narrow: options.narrowText?.get(clause.field),
    })
    const zeroDates = options.zeroDates?.has(clause.field) === true
    if (loose) return letThrough(compiled, clause, fields[clause.field]!, dialect, zeroDates)
    // a value the SQL cannot judge (SQLite's text under a number, a boolean 2, a timestamp in another spelling) is
    // compared as stored, a record shows it otherwise or not at all: a precondition holds on none
    if (options.heldOnlyWhenJudged?.has(clause.field) === true && clause.op !== 'is_null') {
      const held = heldOnlyWhenJudged(compiled, clause, fields[clause.field]!, dialect, zeroDates)
      if (held !== compiled) return held
    }
    // a precondition is the SQL's last word: a date naming no day is no instant the plan judged, so it holds nothing
    return zeroDates && clause.op !== 'is_null' ? sql`(${compiled} and not ${namingNoDay(clause.field)})` : compiled
  })
  if (parts.length === 0) return null
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`
}

/** How one clause's column compares, from the column facts (see compileFilter). */
interface ClauseColumn {
  readonly asText?: boolean | undefined
  readonly loose?: boolean
  readonly exact?: boolean
  readonly shown?: ShownAs | undefined
  readonly narrow?: NarrowText | undefined
}

function compileClause(clause: Clause, fields: FieldTypes, dialect: SqlDialectName, where: string, how: ClauseColumn = {}): RawBuilder<unknown> {
  const { asText, loose = false, exact = false, shown } = how
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
  // a MySQL FLOAT (PostgreSQL real) compared as the text the server sends, the value a record shows ("0.1", not 0.100000001…); a
  // YEAR as the number it shows (compared with one, it reads 24 as 2024); a PostgreSQL date as the midnight it shows
  // (compared with a date-time parameter, it reads that as a date: 12:00 on the day equalled it)
  const plain = asText === undefined || type !== 'string' || op === 'is_null' || (asText && integerEquality(op, clause.value))
  const column =
    shown === 'float' ? (dialect === 'postgres' ? sql`cast(cast(${ref} as text) as double precision)` : sql`cast(cast(${ref} as char) as double)`) : shown === 'year' ? sql`(${ref} + 0)` : shown === 'day' ? sql`cast(${ref} as timestamp)` : plain ? ref : sql`cast(${ref} as text)`
  if (op === 'is_null') {
    if (typeof clause.value !== 'boolean') throw mismatch(where, field, op, type, 'true or false')
    return clause.value ? sql`${column} is null` : sql`${column} is not null`
  }
  const values = Array.isArray(clause.value) ? clause.value : [clause.value as Scalar]
  for (const v of values) if (!isValueOfType(type, v)) throw mismatch(where, field, op, type, EXPECTED[type])
  if (type === 'timestamp' && values.some((v) => instantOf(v, true) === null)) {
    throw mismatch(where, field, op, type, EXPECTED[type])
  }
  if (dialect === 'mysql' && type === 'string') return compileMysqlString(column, op, values as string[], how.narrow)
  if (shown === 'micros') return compileShownMilliseconds(ref, op, values as string[], dialect)
  if (dialect === 'sqlite' && type === 'string') return compileSqliteString(column, op, values as string[])
  if (dialect === 'postgres' && type === 'string' && exact && op !== 'contains') return compilePostgresExactString(column, op, values as string[])

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
      // Strings order by code point on both dialects, as in JavaScript; the database's collation may not. So do
      // timestamps kept as text on PostgreSQL, in toISOString's spelling (any other is judged in memory)
      const left = dialect === 'postgres' && (type === 'string' || (type === 'timestamp' && loose)) ? sql`cast(${column} as text) collate "C"` : column
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
 * Equality keeps a plain `=` / `in` beside it so an index on the column still narrows the rows (the value in the
 * column's character set where it is narrower: `textParam`).
 */
function compileMysqlString(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>, op: Operator, values: readonly string[], narrow?: NarrowText): RawBuilder<unknown> {
  const bytes = (value: unknown) => sql`cast(convert(${value} using utf8mb4) as binary)`
  const list = (wrap: (v: string) => unknown) => sql.join(values.map(wrap))
  switch (op) {
    case 'eq':
      return sql`(${column} = ${textParam(values[0], narrow)} and ${bytes(column)} = ${bytes(values[0])})`
    case 'in':
      return sql`(${column} in (${list((v) => textParam(v, narrow))}) and ${bytes(column)} in (${list((v) => bytes(v))}))`
    case 'not_in':
      return sql`${bytes(column)} not in (${list((v) => bytes(v))})`
    default: {
      const symbol = op === 'lt' ? sql.raw('<') : op === 'lte' ? sql.raw('<=') : op === 'gt' ? sql.raw('>') : sql.raw('>=')
      return sql`${bytes(column)} ${symbol} ${bytes(values[0])}`
    }
  }
}

/**
 * A date-time column keeping microseconds (MySQL DATETIME(6), PostgreSQL timestamptz), compared as the millisecond a
 * record shows (both drivers cut the stored instant to it): shown = t is t <= column < t + 1 ms, shown <= t is
 * column < t + 1 ms, and so on; bounds on the column itself, so its index still serves. NULL meets none, `not_in`
 * included.
 */
function compileShownMilliseconds(column: ReturnType<typeof sql.ref>, op: Operator, values: readonly string[], dialect: SqlDialectName): RawBuilder<unknown> {
  const from = (v: string) => paramOf(v, 'timestamp', dialect)
  const until = (v: string) => paramOf(new Date(instantOf(v)! + 1).toISOString(), 'timestamp', dialect)
  const within = (v: string) => sql`(${column} >= ${from(v)} and ${column} < ${until(v)})`
  switch (op) {
    case 'eq':
      return within(values[0]!)
    case 'in':
      return sql`(${sql.join(values.map(within), sql` or `)})`
    case 'not_in':
      return sql`(${column} is not null and not (${sql.join(values.map(within), sql` or `)}))`
    case 'lt':
      return sql`${column} < ${from(values[0]!)}`
    case 'lte':
      return sql`${column} < ${until(values[0]!)}`
    case 'gt':
      return sql`${column} >= ${until(values[0]!)}`
    default:
      return sql`${column} >= ${from(values[0]!)}`
  }
}

/**
 * SQLite compares a column by its declared collation (NOCASE folds ASCII case, RTRIM ignores trailing spaces, an
 * application may register its own), a CAST of it included: `folded = 'active'` met "ACTIVE", and a precondition
 * held on a record that did not meet it. BINARY is code-point order of the UTF-8 text, the filter's semantics; on a
 * column of the default collation it is the same comparison, and an index on it still serves it.
 */
function compileSqliteString(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>, op: Operator, values: readonly string[]): RawBuilder<unknown> {
  const binary = sql`${column} collate binary`
  switch (op) {
    case 'eq':
      return sql`${binary} = ${values[0]}`
    case 'in':
      return sql`${binary} in (${sql.join(values.map((v) => sql.val(v)))})`
    case 'not_in':
      return sql`${binary} not in (${sql.join(values.map((v) => sql.val(v)))})`
    default: {
      const symbol = op === 'lt' ? sql.raw('<') : op === 'lte' ? sql.raw('<=') : op === 'gt' ? sql.raw('>') : sql.raw('>=')
      return sql`${binary} ${symbol} ${values[0]}`
    }
  }
}

/**
 * PostgreSQL's `=` on char(n) ignores trailing spaces, on citext and a non-deterministic collation it ignores
 * case: "ACTIVE" met `not_in: ["active"]` nowhere. Compared as text under "C", the value compares as a record shows
 * it (a char(n) value is read as this same text, without padding: see postgres-backend.ts). Equality keeps the
 * plain `=` / `in` beside it (code-point equal values are equal under it too), so an index still narrows the rows.
 */
function compilePostgresExactString(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>, op: Operator, values: readonly string[]): RawBuilder<unknown> {
  const text = sql`cast(${column} as text) collate "C"`
  const list = sql.join(values.map((v) => sql.val(v)))
  switch (op) {
    case 'eq':
      return sql`(${column} = ${values[0]} and ${text} = ${values[0]})`
    case 'in':
      return sql`(${column} in (${list}) and ${text} in (${list}))`
    case 'not_in':
      return sql`${text} not in (${list})`
    default: {
      const symbol = op === 'lt' ? sql.raw('<') : op === 'lte' ? sql.raw('<=') : op === 'gt' ? sql.raw('>') : sql.raw('>=')
      return sql`${text} ${symbol} ${values[0]}`
    }
  }
}

function mismatch(where: string, field: string, op: Operator, type: FieldType, expected: string): WarrantError {
  return new WarrantError('invalid_request', `${where} on "${field}": operator "${op}" on a ${type} field expects ${expected}`, {
    field,
    operator: op,
  })
}
