import type { FieldType } from '../../config/index.js'
import { decimalOf } from '../../contract/index.js'
import type { SourceRecord } from '../connector.js'
import type { FieldTypes } from './compile.js'
import { idKindRefused } from './id-kind.js'

/**
 * One stored value as the gateway sees it: tags as string[] (parsed from the JSON text column), integer and
 * number as numbers (PostgreSQL numeric/bigint arrive as strings), booleans from SQLite's 0/1, timestamps as
 * ISO strings. NULL stays null. A value that cannot be read as its type is kept as stored rather than guessed.
 * An integer a number cannot hold exactly (past 2^53) is kept as its exact digits, whatever the field's type:
 * rounded, 2^53 + 1 would read as 2^53, another row's id; so is a decimal text with more digits than a number
 * keeps ("12345678901234567.89" would read as 12345678901234568).
 */
export function normaliseValue(type: FieldType, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (typeof value === 'bigint') {
    // SQLite gives every integer as a bigint (safe integers), MySQL's driver its big ones
    const n = Number(value)
    if (!Number.isSafeInteger(n)) return value.toString()
    value = n
  }
  switch (type) {
    case 'tags': {
      let parsed: unknown = value
      if (typeof value === 'string') {
        try {
          parsed = JSON.parse(value)
        } catch {
          return value
        }
      }
      return Array.isArray(parsed) ? parsed.map((t) => (typeof t === 'string' ? t : JSON.stringify(t))) : value
    }
    case 'number':
    case 'integer': {
      if (typeof value === 'number') return value
      if (typeof value === 'string') {
        // PostgreSQL's bigint and numeric and MySQL's DECIMAL arrive as text. At most 15 digits, no exponent: a
        // double holds every such decimal exactly (DBL_DIG), no check needed
        if (value.length <= 15 && SHORT_DECIMAL.test(value)) return Number(value)
        // only a decimal numeral is a number: Number('') is 0 and Number('0x1F') is 31, values no row held (a
        // SQLite column takes any text); such text is shown as stored
        const form = decimalOf(value)
        if (form === null) return value
        const n = Number(value)
        // digits a number would round stay as they are (an integer past 2^53; a decimal with more digits than a
        // double keeps)
        if (!Number.isSafeInteger(n) && INTEGER_TEXT.test(value)) return value
        if (!Number.isFinite(n)) return value
        return form === decimalOf(String(n)) ? n : value
      }
      return value
    }
    case 'boolean':
      if (typeof value === 'boolean') return value
      if (value === 0 || value === 1) return value === 1
      return value
    case 'timestamp':
      return value instanceof Date ? value.toISOString() : value
    case 'string':
      if (typeof value === 'string') return value
      if (value instanceof Date) return value.toISOString()
      return typeof value === 'object' ? JSON.stringify(value) : String(value)
  }
}

const INTEGER_TEXT = /^\s*-?\d+\s*$/
const SHORT_DECIMAL = /^-?\d+(?:\.\d+)?$/

/** A stored value as the string an id or a version is compared by. */
export function keyString(value: unknown): string {
  if (value instanceof Date) return value.toISOString()
  return String(value)
}

/**
 * A stored version as the string it is compared by; "" for NULL, which names no version, as "" names none
 * (`hasNoVersion`). As `String(null)`, a NULL read as "null", the version of a row holding the text 'null', and was
 * frozen so although no conditional UPDATE (`version = ?`) ever matches a NULL. So is a value of a kind no id may be
 * (`idKindRefused`).
 */
function versionString(value: unknown): string {
  // a value the driver gives as an object, an array or bytes (a type the catalogue does not name as such) names
  // no version either: made text it was "[object Object]" for every row, which no conditional UPDATE matches
  return value === null || value === undefined || idKindRefused(value) !== null ? '' : keyString(value)
}

/** One row of the declared columns as a SourceRecord: every declared field, normalised. */
export function toSourceRecord(row: Readonly<Record<string, unknown>>, fields: FieldTypes, idField: string, versionField: string): SourceRecord {
  return sourceRecordReader(fields, idField, versionField)(row)
}

/**
 * `toSourceRecord` for one resource, its fields listed once: a walk reads every row through it, and listing the
 * fields per row (`Object.entries`) was an array per field per row for the collector to take back.
 *
 * @example
 * const recordOf = sourceRecordReader(resource.fields, 'id', 'version')
 * const records = rows.map(recordOf)
 */
export function sourceRecordReader(fields: FieldTypes, idField: string, versionField: string): (row: Readonly<Record<string, unknown>>) => SourceRecord {
  const names = Object.keys(fields)
  const types = names.map((name) => fields[name]!)
  return (row) => {
    const out: Record<string, unknown> = {}
    for (let i = 0; i < names.length; i++) out[names[i]!] = normaliseValue(types[i]!, row[names[i]!])
    return { id: keyString(row[idField]), version: versionString(row[versionField]), fields: out }
  }
}

/**
 * Like `sourceRecordReader`, for rows the caller owns and drops (a page the driver just built, of exactly the
 * declared columns, in their order): each row becomes its record's `fields`, normalised in place, so a walk
 * builds one object per row instead of two. The id and version are read before the values are normalised.
 */
export function ownedRowReader(fields: FieldTypes, idField: string, versionField: string): (row: Record<string, unknown>) => SourceRecord {
  const names = Object.keys(fields)
  const types = names.map((name) => fields[name]!)
  return (row) => {
    const id = keyString(row[idField])
    const version = versionString(row[versionField])
    for (let i = 0; i < names.length; i++) row[names[i]!] = normaliseValue(types[i]!, row[names[i]!])
    return { id, version, fields: row }
  }
}
