import { sql, type RawBuilder } from 'kysely'
import { valueTypeOf, type ColumnType } from './column-types.js'
import type { ConnectorContext } from './context.js'
import { textParam } from './mysql-charsets.js'
import { mysqlDecimalCast } from './mysql-decimals.js'
import { idParam } from './resource.js'

/**
 * An id bound for a MySQL/MariaDB or PostgreSQL statement: the parameter, and whether the engine's `=` on it is
 * already exact (`exact`: no text comparison to add, see `idMatch`); or why no parameter can name a row.
 */
export type ServerIdBinding = { readonly param: RawBuilder<unknown>; readonly exact: boolean } | { readonly refusal: string }

/**
 * An id as a MySQL/MariaDB or PostgreSQL parameter, by the id column's type as the catalogue shows it, not by the
 * declared id type. A walk shows each id as the driver reads the stored value (record.ts `keyString`): a
 * decimal(10,2) 1 as "1.00", a varchar '1.0' as "1.0", whatever the id is declared. Bound by the declared type, an
 * integer id "1.00" was no id at all (missing, never read), and a number id "1.0" over text went as the number 1,
 * which the text '1.0' is not: a record the walk had just shown read as absent, and a write said "no such record".
 *
 * So text goes to a text column as it is; an integer's digits to an integer column as that integer, exactly; a
 * decimal numeral to a decimal column as a decimal (MySQL would compare a string with it as doubles, and find
 * 9007199254740992 for "…993"); to a floating-point column only the shortest spelling of a value (a walk shows
 * none other), which the engine reads back as that very value. An id the column cannot hold is refused, saying
 * why: PostgreSQL fails a statement on a parameter its type cannot read, and with it every other id of the batch.
 * (A MySQL FLOAT id is refused as a whole: table-facts.ts `floatId`.)
 */
export function serverIdBinding(ctx: ConnectorContext, id: string, column: ColumnType | null | undefined): ServerIdBinding {
  const pg = ctx.dialect === 'postgres'
  if (column === null || column === undefined || (column.kind !== 'numeric' && column.kind !== 'text')) {
    // a date or timestamp column: only the instant's ISO text, which a walk shows, names a row; the engine reads any
    // other spelling its own way (a date "2024-06-01T12:00:00.000Z" as 2024-06-01, "12:00+02:00" as 12:00 in a
    // column without a zone), and a write to it was committed on the row shown under another id
    if (column?.secondDigits != null && !shownInstant(id, column, pg)) return { refusal: cannotHold(ctx, id, column.declared) }
    // MySQL/MariaDB read the ISO text with its "Z" as a truncated value: a SELECT's `=` took it, an `in` list and a
    // strict UPDATE did not (the ids a walk showed read missing, a write "no longer meets the precondition"); the
    // instant goes as a date, which the driver sends as UTC text the session (time_zone +00:00) reads exactly
    if (column?.secondDigits != null && ctx.dialect === 'mysql') return { param: sql`${new Date(id)}`, exact: false }
    // a PostgreSQL uuid column fails the whole statement on a parameter that is no uuid ("abc"); another spelling of
    // one (capitals, braces, no hyphens) it reads as the row shown otherwise, which the read and write judge as such
    if (pg && column != null && valueTypeOf(column) === 'uuid' && !UUID_TEXT.test(id.replace(/^\{(.*)\}$/, '$1').replaceAll('-', ''))) return { refusal: cannotHold(ctx, id, column.declared) }
    // no catalogue, or a column of another kind (a uuid): bound as the id is declared
    const param = idParam(ctx.idType, id)
    return param === undefined ? { refusal: cannotHold(ctx, id, `declared ${ctx.idType}`) } : { param: sql`${param}`, exact: false }
  }
  // an id a narrower character set than utf8mb4 lacks ('😀' and latin1) failed the statement: see textParam
  if (column.kind === 'text') return { param: textParam(id, column.narrowText), exact: false }
  if (column.integer) {
    if (!/^-?\d+$/.test(id) || (pg && !withinRange(valueTypeOf(column), BigInt(id)))) return { refusal: cannotHold(ctx, id, column.declared) }
    return { param: sql`${idParam('integer', id)}`, exact: false }
  }
  if (/^(real|double precision|float|double)$/i.test(valueTypeOf(column))) {
    // the shortest spelling is the one a walk shows, and the only one naming that value alone ("1.0" and "1" are one)
    const n = Number(id)
    const special = pg && /^(NaN|-?Infinity)$/.test(id)
    if (!special && (!NUMERAL.test(id) || !Number.isFinite(n) || String(n) !== id)) return { refusal: cannotHold(ctx, id, column.declared) }
    return { param: pg ? sql`${id}` : sql`${n}`, exact: true }
  }
  if (pg) return NUMERAL.test(id) || id === 'NaN' ? { param: sql`${id}`, exact: false } : { refusal: cannotHold(ctx, id, column.declared) }
  if (!NUMERAL.test(id)) return { refusal: cannotHold(ctx, id, column.declared) }
  const cast = mysqlDecimalCast(id)
  return cast === null ? { refusal: cannotHold(ctx, id, column.declared) } : { param: cast, exact: false }
}

/**
 * Whether `id` is spelled as a record of a date or timestamp column shows its id (record.ts `keyString`): the
 * instant's `toISOString`, at midnight UTC for a date; PostgreSQL's infinities as pg reads them.
 */
function shownInstant(id: string, column: ColumnType, pg: boolean): boolean {
  if (pg && (id === 'Infinity' || id === '-Infinity')) return true
  const at = Date.parse(id)
  if (Number.isNaN(at) || new Date(at).toISOString() !== id) return false
  return !(column.dateOnly === true || /^date$/i.test(valueTypeOf(column))) || id.endsWith('T00:00:00.000Z')
}

const NUMERAL = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/

const PG_INTEGER_BITS: Readonly<Record<string, bigint>> = { smallint: 15n, integer: 31n, bigint: 63n }

/** Whether PostgreSQL reads `value` as a value of the integer type `declared`: past its range, the statement fails. */
function withinRange(declared: string, value: bigint): boolean {
  const bits = PG_INTEGER_BITS[declared.toLowerCase()] ?? 63n
  return value >= -(2n ** bits) && value < 2n ** bits
}

/** A uuid's 32 hex digits, braces and hyphens set aside (PostgreSQL reads any such spelling as a uuid). */
const UUID_TEXT = /^[0-9a-fA-F]{32}$/

function cannotHold(ctx: ConnectorContext, id: string, type: string): string {
  return `id "${id}" cannot be a value of id column "${ctx.idField}" of ${ctx.endpoint} (${type}), nor the id a record of it shows: no row was read for it, and it is not reported missing, since the column's type, not the table, rules it out; use an id as a record shows it`
}
