import { clausesOf, decimalOf, filterMatcher, namesInstant, quotedKey, unstorableKey, wholeDecimal, type Filter } from '../../contract/index.js'
import type { ReadPageResult, SourceRecord } from '../connector.js'
import { createShapeTally } from '../shape-tally.js'
import { judgedInMemory, type FieldTypes } from './compile.js'
import type { SqlResource } from './resource.js'
import { hasNoVersion } from './version.js'

type Unjudged = NonNullable<Extract<ReadPageResult, { kind: 'page' }>['unjudged']>

/** What a page's records become: those the filter matches, and a tally of those that cannot be judged. */
export interface JudgedPage {
  readonly items: SourceRecord[]
  readonly unjudged: Unjudged | null
}

/**
 * Judges a page's records as the declared fields say, before any is in an answer. A SQLite column takes a value
 * of any type whatever it is declared ("N/A" in a REAL column, "yes" in a boolean, text that is no JSON list in a
 * tags column): such a record cannot be judged by any filter, exclusion rule or precondition, so it is counted
 * and named (the walk says not complete), never shown as matching or dropped without a word, as an http
 * upstream's record of another shape is.
 *
 * A column that can hold values of another type (any SQLite column; a number column under a boolean, a text or
 * JSON column under tags or a timestamp on the server engines: `looseFieldsOf`) is compared by the engine in its
 * own way: SQLite orders text above every number, timestamps as text ("2024-06-01 13:00:00" sorts before
 * "2024-06-01T12:00:00.000Z"), MySQL reads "2024-06-01T13:00:00+02:00" as 13:00, a boolean 2 is neither true nor
 * false, text that is no JSON list contains no tag. So a filter's clauses on such fields let those values
 * through (`compileFilter`'s `judgedInMemory`) and are checked here again on the normalised values, timestamps
 * by instant: a record the SQL let through only for its spelling is dropped if it does not match, and one that
 * names no number, boolean, instant or list is unjudged. A record the filter matches whose version column is NULL
 * or '' is counted too (`versionless`): no write could be made conditional on it.
 */
export function createPageJudge(resource: ResourceKeys, filter: Filter, loose: ReadonlySet<string>): (records: readonly SourceRecord[]) => JudgedPage {
  const mistyped = mistypedFieldsOf(resource)
  const part = inMemoryPart(filter, loose)
  const rechecked = part === null ? null : filterMatcher(part, resource.fields)
  const bytes = bytesUnder(part, resource.fields)
  return (records) => {
    const shape = createShapeTally()
    const items: SourceRecord[] = []
    for (const record of records) {
      const wrong = mistyped(record) ?? bytes(record)
      if (wrong !== null) shape.add([], wrong)
      else if (rechecked === null || rechecked(record.fields)) {
        // a row the filter matches with no version (NULL or ''): frozen, no conditional write could ever match it
        if (hasNoVersion(record)) shape.addVersionless(resource.versionField)
        else items.push(record)
      }
    }
    return { items, unjudged: shape.result() }
  }
}

/** The clauses the SQL lets values through on, to be judged here; null when none. */
function inMemoryPart(filter: Filter, loose: ReadonlySet<string>): Filter | null {
  const part: Record<string, Filter[string]> = {}
  for (const clause of clausesOf(filter)) if (judgedInMemory(clause, loose)) part[clause.field] = filter[clause.field]!
  return Object.keys(part).length === 0 ? null : part
}

/**
 * For the string fields a filter's in-memory part compares (SQLite's): those of a record holding bytes, shown as
 * JSON of the driver's Buffer (`normaliseValue`), as PostgreSQL bytea and MariaDB BLOB are, where a filter on such
 * a column is refused as a misfit; null when none. Their text is no value the filter can be judged on: the row
 * is counted as not judged, never matched nor dropped on that JSON. (A text value spelled exactly so is counted too.)
 */
function bytesUnder(part: Filter | null, fields: FieldTypes): (record: SourceRecord) => string[] | null {
  const names = part === null ? [] : Object.keys(part).filter((f) => fields[f] === 'string')
  return (record) => {
    let wrong: string[] | null = null
    for (const name of names) {
      const value = record.fields[name]
      if (typeof value === 'string' && BUFFER_JSON.test(value)) (wrong ??= []).push(name)
    }
    return wrong
  }
}

/** `JSON.stringify` of a Node Buffer: bytes under a string field, as a record shows them. */
const BUFFER_JSON = /^\{"type":"Buffer","data":\[(?:\d{1,3}(?:,\d{1,3})*)?\]\}$/

/** What judging a record needs of its resource: the declared fields, and which of them name it. */
export type ResourceKeys = Pick<SqlResource, 'fields' | 'idField' | 'versionField'>

/**
 * For one resource's fields: the fields of a record whose values are not of their declared type (null when all
 * are), for the types a stored value can betray (number, integer, boolean, tags, timestamp); and the id or
 * version field when its text is no key the store keeps exactly (a NUL, which a SQLite or MySQL column holds:
 * `unstorableKey`).
 */
export function mistypedFieldsOf(resource: ResourceKeys): (record: SourceRecord) => string[] | null {
  const { fields, idField, versionField } = resource
  // names and types in parallel arrays, walked by index: this runs for every record of every page
  const typed = Object.entries(fields).filter(([, type]) => type === 'number' || type === 'integer' || type === 'boolean' || type === 'tags' || type === 'timestamp')
  const names = typed.map(([field]) => field)
  const types = typed.map(([, type]) => type)
  return (record) => {
    let wrong: string[] | null = null
    const values = record.fields
    for (let i = 0; i < names.length; i++) {
      const value = values[names[i]!]
      if (value !== null && value !== undefined && !fitsType(value, types[i]!)) (wrong ??= []).push(names[i]!)
    }
    if (unstorableKey(record.id) && !wrong?.includes(idField)) (wrong ??= []).push(idField)
    if (unstorableKey(record.version) && !wrong?.includes(versionField)) (wrong ??= []).push(versionField)
    return wrong
  }
}

/** Why a record read by id cannot be judged, naming its fields of another type. */
export function mistypedMessage(endpoint: string, record: SourceRecord, wrong: readonly string[], fields: FieldTypes): string {
  const infinite = wrong.some((f) => typeof record.fields[f] === 'number')
  return `${endpoint}: record ${quotedKey(record.id)} holds ${wrong.map((f) => `"${f}" as another type than ${fields[f]}`).join(', ')}; it cannot be judged (correct the stored values, or declare each field as the type its values have${infinite ? '; Infinity or NaN is no number JSON carries' : ''}${wrong.some(unstorableText(record)) ? '; an id or version holding a NUL or an unpaired UTF-16 surrogate is no key a store keeps exactly as given' : ''})`
}

/** Whether a field named mistyped is the record's id or version held as text no store keeps exactly. */
function unstorableText(record: SourceRecord): (field: string) => boolean {
  return (field) => typeof record.fields[field] === 'string' && unstorableKey(record.fields[field] as string)
}

/** Whether a normalised value (not null) is of its declared type, for the types a stored value can betray. */
function fitsType(value: unknown, type: FieldTypes[string]): boolean {
  switch (type) {
    case 'integer':
      // a whole number: 1.5 in a numeric, DECIMAL or REAL column (or kept as REAL by SQLite's INTEGER affinity) is
      // no integer, as the http connector judges it (fitsDeclaredType); exact digits past 2^53 with no fraction are
      return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && wholeDecimal(value))
    case 'number':
      // a finite number, or the exact digits of one a double cannot hold. A float column keeps Infinity and NaN
      // (SQLite's 9e999, PostgreSQL's 'NaN'): no JSON number carries them, they would be shown and frozen as null
      return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && decimalOf(value) !== null)
    case 'boolean':
      return typeof value === 'boolean'
    case 'tags':
      return Array.isArray(value)
    case 'timestamp':
      // an instant (a date, a date-time); a number (epoch seconds? milliseconds?) names none for sure
      return namesInstant(value)
    default:
      return true
  }
}
