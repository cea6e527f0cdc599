import { canonicalJson, instantOf } from '../contract/index.js'
import type { FieldTypeMisfit, NumberColumn, StringColumn, StringKeeping } from './column-keeping.js'

/**
 * Whether `set`'s value of `field` puts back exactly what the record held before (`restores`, a compensation's
 * recorded before-value, see `WriteRequest.restores`): the column held it, so no judgement of the value against the
 * declared type or the column's type applies to it. Scalars alone: a list or an object is judged as any value.
 *
 * @example restoresHeld('code', 'abc', { code: 'abc' }) // true
 */
export function restoresHeld(field: string, value: unknown, restores: Readonly<Record<string, unknown>> | undefined): boolean {
  if (restores === undefined || !Object.hasOwn(restores, field)) return false
  if (value === null || !['string', 'number', 'boolean'].includes(typeof value)) return false
  return canonicalJson(value) === canonicalJson(restores[field] ?? null)
}

/**
 * The first field a write sets to a value (not null) whose column holds another type than the field is declared
 * (`FieldTypeMisfit`, the judgement that refuses a filter on it), with the value's type; null when every set field
 * fits, or where no misfits could be read. Such a value never lands as approved: PostgreSQL refuses a boolean
 * into an integer column ("invalid input syntax for type integer"), SQLite and MariaDB keep a number or a boolean
 * in a text column as text, which a record then shows as a string. Null is every column's "none", and is written;
 * a value `restores` puts back as the record held it is not judged (`restoresHeld`).
 *
 * @example setMisfit({ flag: true }, misfits) // { misfit: { field: 'flag', column: 'integer', … }, valueType: 'a boolean' }
 */
export function setMisfit(
  set: Readonly<Record<string, unknown>>,
  misfits: readonly FieldTypeMisfit[] | null,
  restores?: Readonly<Record<string, unknown>>,
): { readonly misfit: FieldTypeMisfit; readonly valueType: string } | null {
  if (misfits === null || misfits.length === 0) return null
  for (const [field, value] of Object.entries(set)) {
    // a value put back as the record held it: the column held it, whatever its type (`restoresHeld`)
    if (value === null || value === undefined || restoresHeld(field, value, restores)) continue
    const misfit = misfits.find((m) => m.field === field)
    if (misfit) return { misfit, valueType: Array.isArray(value) ? 'a list' : `a ${typeof value}` }
  }
  return null
}

/** Why a value set into a misfit column cannot be written as approved, in the words of every refusal of it. */
export function setMisfitMessage(found: { readonly misfit: FieldTypeMisfit; readonly valueType: string }): string {
  return `sets "${found.misfit.field}" to ${found.valueType} where ${found.misfit.cause}; the database would refuse the value or keep it as another type than declared`
}

/** A string value set into a column that does not keep it as written (`StringColumn`), with what the column keeps. */
export interface StringMisfit {
  readonly column: StringColumn
  readonly value: string
  readonly keeps: string
}

/**
 * The first string a write sets into a column of integers, decimals or booleans that the column would not keep
 * exactly as written: PostgreSQL refuses "abc" or "42.5" in an integer column (22P02), MariaDB refuses or zeroes it,
 * SQLite keeps it as TEXT among integers; "042" or "-0" would come back "42" and "0", another value than approved.
 * Null when every one fits, or where the columns could not be read (the write itself judges again). A string
 * `restores` puts back as the record held it is judged only where the column holds no other string (see below).
 *
 * @example setStringMisfit({ code: 'abc' }, columns) // { column: { field: 'code', column: 'integer', … }, value: 'abc', keeps: 'an integer …' }
 */
export function setStringMisfit(set: Readonly<Record<string, unknown>>, columns: readonly StringColumn[] | null, restores?: Readonly<Record<string, unknown>>): StringMisfit | null {
  if (columns === null || columns.length === 0) return null
  for (const [field, value] of Object.entries(set)) {
    if (typeof value !== 'string') continue
    const column = columns.find((c) => c.field === field)
    // a string put back as the record held it, into a column that keeps any other string as written (SQLite's TEXT
    // among integers), is kept as it was; a column holding no such string (PostgreSQL, MariaDB) cannot have held
    // it as it is now: changed since, and the value is refused as any other
    if (column?.holdsOtherText === true && restoresHeld(field, value, restores)) continue
    if (column !== undefined && !keptAsWritten(value, column.keeps)) return { column, value, keeps: keepsWords(column.keeps) }
  }
  return null
}

/** Why such a value cannot be written as approved, in the words of every refusal of it (see `setMisfitMessage`). */
export function stringMisfitMessage(found: StringMisfit): string {
  return `sets "${found.column.field}" to ${shown(found.value)} where ${found.column.cause}, which keeps a string as written only when it is ${found.keeps}; the database would refuse the value or keep another one than approved`
}

/** A number set into a column that would not keep it exactly (`NumberColumn`), with what the column keeps. */
export interface NumberMisfit {
  readonly column: NumberColumn
  readonly value: number
  readonly keeps: string
  /** The number is an integer past 2^53 - 1, the reading of several JSON integers: which one was meant is unknown. */
  readonly inexact?: true
}

/**
 * The first number a write sets into a column of integers or fixed-point decimals that would not keep it exactly:
 * PostgreSQL and MariaDB round 12.345 into numeric(12,2) to 12.35 (0.1 + 0.2 to 0.30), refuse 1e13 there, refuse or
 * round 12.5 into an integer column and refuse 40000 into a smallint. Null when every one fits, or where the columns
 * could not be read (the write itself judges again).
 *
 * @example setNumberMisfit({ amount: 12.345 }, columns) // { column: { field: 'amount', column: 'numeric(12,2)', … }, value: 12.345, keeps: '…' }
 */
export function setNumberMisfit(set: Readonly<Record<string, unknown>>, columns: readonly NumberColumn[] | null): NumberMisfit | null {
  if (columns === null || columns.length === 0) return null
  for (const [field, value] of Object.entries(set)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue
    const column = columns.find((c) => c.field === field)
    if (column === undefined) continue
    if (!numberKept(value, column.keeps)) return { column, value, keeps: numberKeepsWords(column.keeps) }
    // 9007199254740993 and 9007199254740992 are one JavaScript number: past 2^53 - 1 an integer the column would keep
    // exactly is still not known to be the one the JSON named, so it is never written as if it were
    if (column.keeps.as !== 'single' && Number.isInteger(value) && !Number.isSafeInteger(value)) return { column, value, keeps: numberKeepsWords(column.keeps), inexact: true }
  }
  return null
}

/** Why such a number cannot be written as approved, in the words of every refusal of it. */
export function numberMisfitMessage(found: NumberMisfit): string {
  if (found.inexact === true)
    return `sets "${found.column.field}" to ${found.value} where ${found.column.cause}: a number past 2^53 - 1 (${Number.MAX_SAFE_INTEGER}) is the reading of several integers (9007199254740993 reads as 9007199254740992), so the integer written may not be the one meant; set an integer within 2^53 - 1, or declare the field string to write an integer's digits exactly`
  return `sets "${found.column.field}" to ${found.value} where ${found.column.cause}, which keeps only ${found.keeps}: the database would refuse the number or keep another one than approved`
}

function numberKeepsWords(keeps: NumberColumn['keeps']): string {
  if (keeps.as === 'single') {
    const digits = keeps.shownDigits === undefined ? 'about 6 to 9 significant digits, integers up to 2^24 exactly' : `at most ${keeps.shownDigits} significant digits, as the server sends them`
    return `numbers${keeps.unsigned === true ? ' from 0' : ''} a single-precision float stores and reads back as written (${digits})`
  }
  if (keeps.as === 'integer') return `integers from ${keeps.min} to ${keeps.max}`
  const scale = keeps.scale === null ? '' : keeps.scale === 0 ? ' without a fraction' : ` with at most ${keeps.scale} digit(s) after the point`
  return `numbers${keeps.unsigned === true ? ' from 0' : ''}${scale}${keeps.digits === null ? '' : ` and at most ${keeps.digits - (keeps.scale ?? 0)} before it`}`
}

function numberKept(value: number, keeps: NumberColumn['keeps']): boolean {
  if (keeps.as === 'single') return singleReadBack(value, keeps.shownDigits) === value && !(keeps.unsigned === true && value < 0)
  const digits = plainDecimal(value)
  if (keeps.as === 'integer') return INTEGER.test(digits) && BigInt(digits) >= BigInt(keeps.min) && BigInt(digits) <= BigInt(keeps.max)
  const match = DECIMAL.exec(digits)!
  // an UNSIGNED decimal refuses a number below 0 (STRICT), or keeps 0 for it
  if (keeps.unsigned === true && value < 0) return false
  const fraction = match[3]?.length ?? 0
  if (keeps.scale !== null && fraction > keeps.scale) return false
  return keeps.digits === null || match[1]!.length <= keeps.digits - (keeps.scale ?? 0) || (match[1] === '0' && keeps.digits === keeps.scale)
}

/**
 * The number read back from a single-precision column `value` was written into: the nearest single-precision value,
 * sent as the shortest text that reads as it (PostgreSQL 12 and later), or rounded to `shownDigits` significant digits
 * where the server sends no more (MariaDB's FLOAT, 6: 16777216 is read back as 16777200), which the driver reads as
 * a double; NaN where float4 cannot hold it (refused, "out of range") or rounds it to 0. The decimal text sent is
 * rounded to float4 through the double it names: the two differ only for text a hair from a float4 midpoint, which no
 * shortest double spelling is.
 */
function singleReadBack(value: number, shownDigits?: number): number {
  const single = Math.fround(value)
  if (!Number.isFinite(single) || (single === 0 && value !== 0)) return Number.NaN
  // printf's %g: the float itself to that many digits, not the shortest text within them (a subnormal such as 1e-40,
  // stored with fewer bits, is sent as 9.99995e-41)
  if (shownDigits !== undefined) return Number(single.toPrecision(shownDigits))
  for (let digits = 1; digits < 9; digits++) {
    const text = Number(single.toPrecision(digits))
    if (Math.fround(text) === single) return text
  }
  return Number(single.toPrecision(9))
}

/** A finite number's decimal digits without an exponent, as the database reads the number Warrant sends (1e-7 is 0.0000001). */
function plainDecimal(value: number): string {
  const text = String(Object.is(value, -0) ? 0 : value)
  const exp = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text)
  if (exp === null) return text
  const [, sign, lead, rest = '', power] = exp
  const all = lead! + rest
  const point = 1 + Number(power)
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${all}`
  return point >= all.length ? `${sign}${all}${'0'.repeat(point - all.length)}` : `${sign}${all.slice(0, point)}.${all.slice(point)}`
}

const DAY_MS = 86_400_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const INTEGER = /^-?(0|[1-9]\d*)$/
const DECIMAL = /^-?(0|[1-9]\d*)(\.(\d+))?$/

function keptAsWritten(value: string, keeps: StringKeeping): boolean {
  switch (keeps.as) {
    case 'integer':
      // "-0" is kept as 0 and read back "0"
      return INTEGER.test(value) && value !== '-0' && BigInt(value) >= BigInt(keeps.min) && BigInt(value) <= BigInt(keeps.max)
    case 'boolean':
      return keeps.spellings.includes(value)
    case 'members': {
      if (!keeps.multiple) return keeps.values.includes(value)
      if (value === '') return true
      // MariaDB keeps a SET's members once each, in the order the table declares them ("b,a" is kept as "a,b")
      const at = value.split(',').map((v) => keeps.values.indexOf(v))
      return at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!))
    }
    case 'uuid':
      return UUID.test(value)
    case 'instant': {
      const at = instantOf(value)
      if (at === null) return false
      if (keeps.day) return ((at % DAY_MS) + DAY_MS) % DAY_MS === 0
      // digits of the second past the column's, in the text (a fourth digit instantOf drops) and in the instant
      const fraction = /:\d\d\.(\d+)/.exec(value)?.[1] ?? ''
      return /^0*$/.test(fraction.slice(keeps.secondDigits)) && (((at % 1000) + 1000) % 1000) % 10 ** (3 - keeps.secondDigits) === 0
    }
    case 'decimal': {
      const match = DECIMAL.exec(value)
      if (match === null || /^-[0.]*$/.test(value) || (keeps.unsigned === true && value.startsWith('-'))) return false
      // SQLite keeps an integer's digits as a 64-bit INTEGER, other numbers as a REAL, read back as JavaScript spells it
      if (keeps.asNumber) return match[3] === undefined ? BigInt(value) >= -(2n ** 63n) && BigInt(value) < 2n ** 63n : String(Number(value)) === value
      const fraction = match[3]?.length ?? 0
      if (keeps.scale !== null && fraction !== keeps.scale) return false
      return keeps.digits === null || match[1]!.length <= keeps.digits - (keeps.scale ?? fraction)
    }
  }
}

function keepsWords(keeps: StringKeeping): string {
  switch (keeps.as) {
    case 'integer':
      return `an integer from ${keeps.min} to ${keeps.max}, spelled without a plus sign or leading zeros`
    case 'boolean':
      return keeps.spellings.map((s) => JSON.stringify(s)).join(' or ')
    case 'members': {
      const members = keeps.values.map((s) => JSON.stringify(s)).join(', ')
      return keeps.multiple ? `a comma-separated list of ${members}, each at most once, in that order, or ""` : `one of ${members}, spelled as the table declares it`
    }
    case 'uuid':
      return 'a uuid in lowercase hex, hyphenated 8-4-4-4-12, as the database spells it back'
    case 'instant':
      if (keeps.day) return 'an instant at midnight UTC (the column keeps the day alone)'
      return keeps.secondDigits === 0 ? 'an instant in whole seconds' : `an instant with at most ${keeps.secondDigits} digit(s) of a second`
    case 'decimal':
      if (keeps.asNumber) return 'a number spelled as the database reads it back (no trailing zeros after the point, at most 15 significant digits)'
      return `a plain decimal${keeps.unsigned === true ? ' not below 0' : ''}${keeps.scale === null ? '' : keeps.scale === 0 ? ' without a point' : ` with exactly ${keeps.scale} digit(s) after the point`}${keeps.digits === null ? '' : ` and at most ${keeps.digits} digit(s) in all`}, without leading zeros`
  }
}

/** The value as a refusal names it: JSON, cut where long (a value may be a whole document). */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
}
