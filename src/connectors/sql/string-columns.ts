import type { FieldType } from '../../config/index.js'
import type { NumberColumn, StringColumn, StringKeeping } from '../column-keeping.js'
import type { Row } from './backend.js'
import type { ColumnType } from './column-types.js'
import type { SqlDialectName } from './url.js'

/**
 * The string fields over a column of integers, decimals or booleans, and which strings each keeps as written
 * (`StringColumn`); and the timestamp fields over a column keeping less than a record shows of an instant (`instantKeeping`). Not judged here: a date or timestamp column on PostgreSQL and MariaDB, and a floating-point one,
 * where any string is a misfit already (`misfitOf`); a SQLite column named for dates (DATE, DATETIME), where SQLite
 * keeps dates as text by design; types whose text is the engine's own (money, bit), but uuid's, which is one spelling.
 */
export function stringColumnsOf(fields: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType>, dialect: SqlDialectName, endpoint: string): StringColumn[] {
  const out: StringColumn[] = []
  for (const [field, type] of Object.entries(fields)) {
    const column = columns.get(field)
    const instant = type === 'timestamp' && column !== undefined ? instantKeeping(column, dialect) : null
    if (instant !== null) {
      out.push({ field, column: column!.declared, cause: `column "${field}" of ${endpoint} is ${column!.declared}${domainWords(column!)}`, keeps: instant })
      continue
    }
    const keeps = type === 'string' && column !== undefined ? keepingOf(column, dialect) : null
    if (keeps === null) continue
    out.push({ field, column: column!.declared, cause: `field "${field}" is declared string, but column "${field}" of ${endpoint} is ${column!.declared}${domainWords(column!)}`, keeps, ...(dialect === 'sqlite' ? { holdsOtherText: true as const } : {}) })
  }
  return out
}

/**
 * The number and integer fields over a PostgreSQL or MySQL/MariaDB column of integers or fixed-point decimals, and
 * which numbers each keeps exactly (`NumberColumn`): the database rounds a number past the column's scale (12.345
 * into numeric(12,2) is kept as 12.35), refuses or rounds a fraction into an integer column, and refuses one past its
 * digits or bounds; and a single-precision float (PostgreSQL real, MySQL FLOAT), which keeps only the numbers it reads
 * back as written. Not here: double-precision columns, and SQLite, which keeps any number as written.
 */
export function numberColumnsOf(fields: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType>, dialect: SqlDialectName, endpoint: string): NumberColumn[] {
  const out: NumberColumn[] = []
  if (dialect === 'sqlite') return out
  for (const [field, type] of Object.entries(fields)) {
    const column = columns.get(field)
    if ((type !== 'number' && type !== 'integer') || column === undefined) continue
    // a PostgreSQL real (or a domain over one) stores a single-precision value, read back as its shortest text
    if (dialect === 'postgres' && column.singleFloat === true) {
      out.push({ field, column: column.declared, cause: `column "${field}" of ${endpoint} is ${column.declared}${domainWords(column)}`, keeps: { as: 'single' } })
      continue
    }
    // so does a MySQL/MariaDB FLOAT, which MariaDB sends with 6 significant digits (16777217 as 16777200, 123456.7 as
    // 123457): judged here, it was refused only when read back after the UPDATE, never at proposal
    if (dialect === 'mysql' && column.declared.toLowerCase() === 'float') {
      const shown = column.unsigned === true ? 'float unsigned' : 'float'
      out.push({ field, column: shown, cause: `column "${field}" of ${endpoint} is ${shown}`, keeps: { as: 'single', shownDigits: MYSQL_FLOAT_DIGITS, ...(column.unsigned === true ? { unsigned: true as const } : {}) } })
      continue
    }
    const keeps = keepingOf(column, dialect)
    // a bare numeric keeps any number as written, but a number past 2^53 - 1 is judged still (`setNumberMisfit`)
    if (keeps === null || keeps.as === 'boolean' || keeps.as === 'members' || keeps.as === 'instant' || keeps.as === 'uuid') continue
    // MySQL's catalogue names the type bare (decimal, int): the digits, scale and sign are what the judgement is about
    const sized = keeps.as === 'decimal' && keeps.digits !== null && column.domain === undefined && !column.declared.includes('(') ? `${column.declared}(${keeps.digits},${keeps.scale ?? 0})` : column.declared
    const shown = column.unsigned === true ? `${sized} unsigned` : sized
    out.push({ field, column: shown, cause: `column "${field}" of ${endpoint} is ${shown}${domainWords(column)}`, keeps })
  }
  return out
}

/**
 * A timestamp field over a date or timestamp column that keeps fewer digits of a second than a record shows: PostgreSQL
 * rounds 12:00:00.123 into timestamp(2) to 12:00:00.12, MySQL DATETIME cuts it to 12:00:00, a date keeps the day only,
 * and PostgreSQL answered such a write "written" with the record showing another instant than approved. Null for a
 * column keeping milliseconds or more, and on SQLite, which keeps the text as written.
 */
function instantKeeping(column: ColumnType, dialect: SqlDialectName): StringKeeping | null {
  if (dialect === 'sqlite' || column.kind !== 'temporal' || column.secondDigits === null) return null
  const day = /^date$/i.test(column.domain?.over ?? column.declared)
  return day || column.secondDigits < 3 ? { as: 'instant', secondDigits: column.secondDigits, day } : null
}

/**
 * A PostgreSQL domain, in words: judged by the type it is over, and what that judgement leaves out. A domain's own
 * CHECK (`value > 0`) is not read: a value the base type keeps may still be refused by it at the write.
 */
function domainWords(column: ColumnType): string {
  if (column.domain === undefined) return ''
  const { over, checked } = column.domain
  return checked ? ` (a domain over ${over}, whose own CHECK is not judged here: the database may still refuse a value ${over} keeps)` : ` (a domain over ${over}, without a CHECK of its own)`
}

function keepingOf(column: ColumnType, dialect: SqlDialectName): StringKeeping | null {
  if (column.floating === true) return null
  // a PostgreSQL domain keeps what its base type keeps (its own CHECK aside, see domainWords)
  const declared = (column.domain?.over ?? column.declared).toLowerCase()
  if (dialect === 'sqlite') {
    // INTEGER affinity keeps an integer's digits as an INTEGER and anything else as TEXT, read back as a string
    // where the other rows hold integers; NUMERIC affinity likewise turns "1.50" into the REAL 1.5
    if (column.kind !== 'numeric') return null
    if (column.integer) return integer(-(2n ** 63n), 2n ** 63n - 1n)
    if (/date|time/.test(declared)) return null
    // a BOOLEAN column keeps true and false as the integers 0 and 1 (SQLite has no boolean); "true" is kept as TEXT
    if (/bool/.test(declared)) return { as: 'boolean', spellings: ['0', '1'] }
    return { as: 'decimal', digits: null, scale: null, asNumber: true }
  }
  // PostgreSQL reads back true and false (a record shows them so); "t", "yes" and "1" are kept as true, shown "true"
  if (column.kind === 'boolean') return dialect === 'postgres' ? { as: 'boolean', spellings: ['true', 'false'] } : null
  // an ENUM or SET keeps its members as the table spells them, and nothing else as written
  if (dialect === 'mysql' && column.members !== undefined) return { as: 'members', ...column.members }
  // PostgreSQL's uuid (and MariaDB's) reads "A0EEBC99-…" or "{a0eebc99…}" and sends back its own spelling: a string
  // so set was answered "written" with a record showing another value than approved
  if (declared === 'uuid') return { as: 'uuid' }
  if (column.kind !== 'numeric') return null
  if (column.integer) {
    const bounds = (dialect === 'postgres' ? POSTGRES_INTEGERS : column.unsigned === true ? MYSQL_UNSIGNED : MYSQL_INTEGERS)[declared]
    return bounds === undefined ? null : integer(bounds[0], bounds[1])
  }
  if (column.decimal === undefined) return null
  return { as: 'decimal', ...column.decimal, asNumber: false, ...(column.unsigned === true ? { unsigned: true as const } : {}) }
}

/** The significant digits MariaDB sends of a FLOAT (FLT_DIG), and MySQL likewise: what a record shows of one. */
const MYSQL_FLOAT_DIGITS = 6

function integer(min: bigint, max: bigint): StringKeeping {
  return { as: 'integer', min: String(min), max: String(max) }
}

const POSTGRES_INTEGERS: Readonly<Record<string, readonly [bigint, bigint]>> = {
  smallint: [-(2n ** 15n), 2n ** 15n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
}

// MySQL/MariaDB's integer types, signed and UNSIGNED (`ColumnType.unsigned`, from the column_type); a display width
// (TINYINT(1), read as a boolean by some clients) bounds nothing. A value past the bounds is refused by STRICT, or
// clamped to them (and then refused when read back).
const MYSQL_INTEGERS: Readonly<Record<string, readonly [bigint, bigint]>> = {
  tinyint: [-(2n ** 7n), 2n ** 7n - 1n],
  smallint: [-(2n ** 15n), 2n ** 15n - 1n],
  mediumint: [-(2n ** 23n), 2n ** 23n - 1n],
  int: [-(2n ** 31n), 2n ** 31n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
  year: [1901n, 2155n],
}

const MYSQL_UNSIGNED: Readonly<Record<string, readonly [bigint, bigint]>> = {
  tinyint: [0n, 2n ** 8n - 1n],
  smallint: [0n, 2n ** 16n - 1n],
  mediumint: [0n, 2n ** 24n - 1n],
  int: [0n, 2n ** 32n - 1n],
  integer: [0n, 2n ** 32n - 1n],
  bigint: [0n, 2n ** 64n - 1n],
  year: [1901n, 2155n],
}

/**
 * A PostgreSQL numeric or decimal (or a domain over one) and MySQL's DECIMAL: its digits in all and after the point,
 * null where it sets none (PostgreSQL's bare numeric keeps a decimal as written); undefined for any other column.
 */
export function decimalOf(dialect: SqlDialectName, row: Row): { readonly digits: number | null; readonly scale: number | null } | undefined {
  if (dialect === 'postgres') {
    const numeric = /^numeric(?:\((\d+),(\d+)\))?$/.exec(String(row.base_type ?? ''))
    return numeric === null ? undefined : { digits: numeric[1] === undefined ? null : Number(numeric[1]), scale: numeric[2] === undefined ? null : Number(numeric[2]) }
  }
  if (dialect !== 'mysql' || !/^(decimal|numeric)$/i.test(String(row.type ?? ''))) return undefined
  return { digits: row.digits == null ? null : Number(row.digits), scale: row.scale == null ? null : Number(row.scale) }
}
