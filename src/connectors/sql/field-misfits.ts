import { fieldTypeSchema, type FieldType } from '../../config/index.js'
import type { FieldTypeMisfit } from '../column-keeping.js'
import type { ColumnKind, ColumnType } from './column-types.js'
import type { SqlDialectName } from './url.js'

/**
 * Why a filter on a field declared `type` cannot be trusted on a column of this type, or null. Only pairs the
 * engine compares otherwise than the declaration says: a number in a text column compares as text ("500" is
 * above "4900" there, and MySQL reads "N/A" as 0), a boolean in a text column as text, a timestamp in a number
 * column as a number, a string in a date or timestamp column as the engine's own spelling of the date. A string
 * field may sit on any other column (an integer id declared string is common): values are shown as text and
 * equality still holds.
 */
export function misfitOf(type: FieldType, column: ColumnType, dialect: SqlDialectName): string | null {
  const { kind } = column
  switch (type) {
    case 'number':
    case 'integer':
      // money is in PostgreSQL's numeric category, yet it rounds a number to lc_monetary's digits (12.345 kept as
      // 12.35), is read as lc_monetary text ("$1,000.50") and compared with no number ("money > numeric"): a write of
      // 12.345 was answered written with "$12.35"
      if (dialect === 'postgres' && (column.domain?.over ?? column.declared) === 'money') return MONEY
      return kind === 'numeric' || kind === 'untyped' ? null : `the database compares its values as ${DESCRIBED[kind]}, not as numbers ("500" would be above "4900")`
    case 'boolean':
      // a SQLite or MySQL number column reads true as 1; PostgreSQL none ("invalid input syntax for type integer")
      if (dialect === 'postgres' && kind === 'numeric') return 'PostgreSQL reads neither true nor false as a number, so a filter on it would fail at the database (declare the field number to filter on its 0 and 1)'
      return kind === 'boolean' || kind === 'numeric' || kind === 'untyped' ? null : `the database compares its values as ${DESCRIBED[kind]}, not as true and false`
    case 'timestamp':
      // a TIME column (a date or timestamp one keeps second digits) names no day: each value is shown as stored and
      // not judged, and a filter would compare times of day (MySQL), or fail on the instant (PostgreSQL)
      if (dialect === 'sqlite') return null
      if (kind === 'temporal' && column.secondDigits === null) return 'the database holds times of day there, not points in time'
      // ISO text in a text column is an instant compared as text; a number, a boolean, JSON or another type (an
      // array, an interval, bytes) holds none the database could compare as one
      return kind === 'temporal' || kind === 'text' ? null : `the database compares its values as ${DESCRIBED[kind]}, not as points in time`
    case 'tags':
      return kind === 'text' || kind === 'json' || kind === 'untyped' ? null : `the database holds ${DESCRIBED[kind]} there, not a JSON list of tags`
    case 'string':
      // a record shows a date as toISOString spells it, the engine compares its own text ("2024-06-01 12:00:00"):
      // equality with the shown value never holds, and a space orders before "T" (a TIME is text in both)
      if (column.secondDigits !== null && kind !== 'untyped') return 'the database compares its values as dates and times, not as the text a record shows'
      if (column.notText === true) return 'the driver reads its values as bytes or a parsed value, which a record shows as JSON, not as the text the database compares'
      // MySQL 8's own JSON type (MariaDB's is LONGTEXT, kept and compared as stored): `{"a":  1}` is sent as `{"a": 1}`,
      // and `=` with a string compares a JSON string, equal to no object
      if (kind === 'json' && dialect === 'mysql') return 'the server sends its JSON re-spelled in its normal form and compares it as JSON, not as the text a record shows'
      // a record shows a float as JavaScript spells it ("1000000000000000", "1e-7"), the engine compares its own
      // spelling (MariaDB "1e15" and "0.0000001", PostgreSQL "1e+15"): equality with the shown value fails
      // SQLite's REAL affinity keeps 100 as 100.0, spelled "100.0" (1e15 "1.0e+15"), which a record shows as "100"
      return (dialect === 'sqlite' ? column.floating === true : FLOATING.test(column.declared)) ? 'the database spells its floating-point values otherwise than a record shows them ("1e15" for "1000000000000000")' : null
  }
}

const MONEY = 'the database rounds a number to the currency\'s digits there (12.345 is kept as 12.35), the driver reads it as text in the server\'s lc_monetary format ("$1,000.50"), not as a number, and no number compares with it ("operator does not exist: money > numeric")'

/** MySQL/MariaDB and PostgreSQL floating-point column types, as the catalogue names them. */
export const FLOATING = /^(float|double|real|double precision)$/i

const DESCRIBED: Readonly<Record<ColumnKind, string>> = { numeric: 'numbers', text: 'text', boolean: 'booleans', temporal: 'dates and times', json: 'JSON', untyped: 'values of any type', other: 'values of another type' }

/**
 * The fix for a field misfitting `column`: the declared types that fit it (`misfitOf` null), or, where none does,
 * that none can and filters on the field stay refused. "Declare the field as the column is" was said of a
 * PostgreSQL text[] too, which no declared type fits: advice no config could follow.
 */
function misfitFix(column: ColumnType, dialect: SqlDialectName): { readonly fix: string; readonly refusalSaid: boolean } {
  const fitting = fieldTypeSchema.options.filter((t) => misfitOf(t, column, dialect) === null)
  if (fitting.length === 0)
    return {
      fix: `no declared type reads a ${column.declared} column as the database compares it: filters on it are refused (leave the field out of \`fields\` if no filter needs it, or change the column)`,
      refusalSaid: true,
    }
  const named = fitting.length === 1 ? fitting[0]! : `one of ${fitting.slice(0, -1).join(', ')} or ${fitting.at(-1)!}`
  return { fix: `declare it ${named}, or change the column`, refusalSaid: false }
}

/** Every declared field whose column the engine compares otherwise than the field is declared, with why and the fix. */
export function fieldMisfits(declared: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType>, dialect: SqlDialectName, endpoint: string): FieldTypeMisfit[] {
  const out: FieldTypeMisfit[] = []
  for (const [field, type] of Object.entries(declared)) {
    const column = columns.get(field)
    const why = column === undefined ? null : misfitOf(type, column, dialect)
    if (why === null) continue
    const cause = `field "${field}" is declared ${type}, but column "${field}" of ${endpoint} is ${column!.declared}: ${why}`
    const { fix, refusalSaid } = misfitFix(column!, dialect)
    out.push({ field, column: column!.declared, cause, fix, problem: `${cause}, so no filter on it can be trusted; ${fix}${refusalSaid ? '' : ' (filters on it are refused)'}` })
  }
  return out
}

/**
 * The first field a filter uses whose column the engine compares otherwise than the field is declared, said as
 * the reason no answer to that filter can be trusted; null when every filtered field fits (or the catalogue
 * could not be read: the read itself then says what is wrong).
 */
export function filterMisfit(fieldsUsed: Iterable<string>, misfits: readonly FieldTypeMisfit[] | null, use: 'filter' | 'precondition' = 'filter'): string | null {
  if (misfits === null || misfits.length === 0) return null
  for (const field of fieldsUsed) {
    const misfit = misfits.find((m) => m.field === field)
    if (misfit) return `${misfit.cause}, so ${MISFIT_USE[use]}; ${misfit.fix}`
  }
  return null
}

const MISFIT_USE = {
  filter: 'no filter on it can be trusted and none was run',
  // the plan judged the precondition on the values a record shows; the UPDATE would compare the engine's way
  precondition: 'a precondition on it would be compared by the database otherwise than the plan compared it, and nothing was written',
} as const
