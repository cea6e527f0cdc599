import type { FieldType } from '../../config/schema.js'
import type { SourceRecord } from '../connector.js'
import { fitsDeclaredType } from '../field-type.js'
import { quotedKey, unstorableKey } from '../../contract/index.js'
import type { HttpContext } from './context.js'
import { readPath } from './json-path.js'

const NO_NUMBERS: ReadonlySet<number> = new Set()

/** Item fields that carry an entity tag when a list has no per-item ETag header. */
const LIST_ETAG_FIELDS = ['etag', '_etag', 'version'] as const

/**
 * One upstream object read against the resource's declared fields. `absent` lists declared fields the object
 * does not carry at their path (and that the config does not declare as "absent means null"); `mistyped`
 * those whose value is not of the declared type. A record with either cannot be judged by a filter that
 * reads those fields: the caller decides what that means, never this function.
 */
export type ReadRecord =
  | { readonly record: SourceRecord; readonly absent: readonly string[]; readonly mistyped: readonly string[] }
  /** `id`: the record's, where only its version is at fault; `versionless`: it has none to freeze (see `VersionlessRecords`) */
  | { readonly problem: string; readonly field: string; readonly id?: string; readonly versionless?: true }

/**
 * One upstream object as a record. The record lies at `recordPath` inside `item` (`doc` for `rows[].doc`);
 * each declared field is read at its `field_paths` entry (default: its own name); the id and the version are
 * declared fields like any other. The version comes from the configured field or, for `version.from: etag`,
 * the response's ETag header (single reads) or an `etag`/`_etag`/`version` member (lists). A record with none
 * (or an empty one) is a problem, never version "": frozen so, every version read later would differ from it.
 * The object must already be redacted. `fields` holds declared fields only, by their declared names.
 * `rounded`: the numbers of the body `JSON.parse` could not hold exactly; a declared field holding one is mistyped.
 */
export function toRecord(ctx: HttpContext, item: unknown, etagHeader: string | null, recordPath: string, rounded: ReadonlySet<number> = NO_NUMBERS): ReadRecord {
  const idField = ctx.resource.id_field
  const doc = readPath(item, recordPath)
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return { problem: recordPath === '' ? 'an item is not a JSON object' : `an item has no JSON object at record_path "${recordPath}"`, field: idField }

  const fields: Record<string, unknown> = {}
  const absent: string[] = []
  const mistyped: string[] = []
  const orNull = new Set(ctx.config.absent_means_null)
  for (const [name, type] of Object.entries(ctx.resource.fields)) {
    const value = readPath(doc, fieldPath(ctx, name))
    if (value === undefined) {
      if (orNull.has(name)) fields[name] = null
      else absent.push(name)
      continue
    }
    fields[name] = value
    // a number JSON.parse rounded (see roundedNumbersOf) is not the value the upstream sent
    if (!fitsDeclaredType(value, type) || (typeof value === 'number' && rounded.has(value))) mistyped.push(name)
  }

  // an integer id past 2^53 was rounded by JSON.parse, maybe onto another record's id: it cannot name a record
  const idValue = fields[idField]
  if (typeof idValue === 'number' && Number.isInteger(idValue) && !Number.isSafeInteger(idValue) && !mistyped.includes(idField)) mistyped.push(idField)
  const id = scalarText(fields[idField])
  if (id === null || id === '') return { problem: `an item has no usable id field "${idField}"${at(ctx, idField)}`, field: idField }
  // an id or version no store keeps exactly as given (a lone surrogate, a NUL) names no record once frozen
  if (unstorableKey(id) && !mistyped.includes(idField)) mistyped.push(idField)
  const version = versionOf(ctx, doc, fields, etagHeader, rounded)
  if (version === ROUNDED)
    return {
      problem: `item ${quotedKey(id)} carries its version as a number past 2^53, which a JSON number cannot carry exactly: it names no version for sure (have the upstream send it as a string or an ETag header)`,
      field: versionFieldName(ctx),
      id,
    }
  if (version === null || version === '') {
    const field = versionFieldName(ctx)
    // an absent declared field is the shape's problem (its path may be wrong); a present one that is empty is no version
    if (absent.includes(field)) return { problem: `item ${quotedKey(id)} has no usable version field "${field}"${at(ctx, field)}`, field, id }
    return { problem: `item ${quotedKey(id)} ${versionlessProblem(ctx, etagHeader)}`, field, id, versionless: true }
  }
  const versionField = ctx.config.version.from === 'field' ? ctx.config.version.field : null
  if (versionField !== null && unstorableKey(version) && !mistyped.includes(versionField)) mistyped.push(versionField)
  return { record: { id, version, fields }, absent, mistyped }
}

/** The id of what was read: a record's, or one whose version alone is at fault (a walk still knows where it is). */
export function readId(made: ReadRecord): string | undefined {
  return 'record' in made ? made.record.id : made.id
}

/** Why a record cannot be judged, naming the fields and the fix. */
export function shapeProblem(ctx: HttpContext, absent: readonly string[], mistyped: readonly string[]): string {
  const parts: string[] = []
  if (absent.length > 0) parts.push(`lacks declared field(s) ${absent.map((f) => describeField(ctx, f)).join(', ')}`)
  if (mistyped.length > 0) parts.push(`carries ${mistyped.map((f) => `${describeField(ctx, f)} as another type than ${ctx.resource.fields[f]}${UNSAFE_HINT[ctx.resource.fields[f]!] ?? ''}${isKey(ctx, f) ? KEY_HINT : ''}`).join(', ')}`)
  return `${parts.join(' and ')}; it cannot be judged (fix connector.field_paths or fields, or list the field in absent_means_null if its absence means null)`
}

/** Where a value of the declared type can still be refused: an integer a JSON number cannot carry exactly, an id no store keeps, a zoneless time. */
const UNSAFE_HINT: Partial<Record<FieldType, string>> = {
  integer: ' (or as an integer past 2^53, which a JSON number cannot carry exactly: have the upstream send it as a string)',
  number: ' (or as a literal a JSON number cannot carry exactly: more than 15 significant digits, an integer past 2^53, or out of a double\'s range such as 1e400 or 1e-400; have the upstream send it as a string)',
  // a local time: the zone it means is not in it, and guessing UTC would move it by the upstream's offset
  timestamp: ' (or as a date-time without a zone, which names no instant for sure: have the upstream send Z or an offset)',
}

const KEY_HINT = ' (or as text holding a NUL or an unpaired UTF-16 surrogate, which no store keeps exactly as given)'

/** The id field, or the field the version is read from. */
function isKey(ctx: HttpContext, field: string): boolean {
  return field === ctx.resource.id_field || (ctx.config.version.from === 'field' && field === ctx.config.version.field)
}

function describeField(ctx: HttpContext, field: string): string {
  return `"${field}"${at(ctx, field)}`
}

/** Where a declared field lives inside the record: its `field_paths` entry, else its own name. */
export function fieldPath(ctx: Pick<HttpContext, 'config'>, field: string): string {
  const paths = ctx.config.field_paths
  return Object.hasOwn(paths, field) ? paths[field]! : field
}

/** ` at "doc._id"` when the field lives under another path, else nothing. */
function at(ctx: HttpContext, field: string): string {
  const path = fieldPath(ctx, field)
  return path === field ? '' : ` at "${path}"`
}

/** An undeclared version member JSON.parse rounded: frozen, it would be a version the record never had. */
const ROUNDED = Symbol('rounded version')

function versionOf(ctx: HttpContext, doc: object, fields: Record<string, unknown>, etagHeader: string | null, rounded: ReadonlySet<number>): string | null | typeof ROUNDED {
  const version = ctx.config.version
  if (version.from === 'field') return scalarText(fields[version.field])
  if (etagHeader !== null) return ctx.redact.text(etagHeader)
  for (const name of LIST_ETAG_FIELDS) {
    const member = readPath(doc, name)
    // 9007199254740995 reads as …996: an If-Match with it would match the record's next version, not this one
    if (typeof member === 'number' && rounded.has(member)) return ROUNDED
    const value = scalarText(member)
    // an undeclared member: a tag no store keeps exactly is no usable version (not a mistyped declared field)
    if (value !== null) return unstorableKey(value) ? null : value
  }
  return null
}

/** Why a record has no version, and the config line that fixes it. */
function versionlessProblem(ctx: HttpContext, etagHeader: string | null): string {
  const version = ctx.config.version
  if (version.from === 'field')
    return `has no usable version field "${version.field}"${at(ctx, version.field)} (null, empty or not a string or number): no change can be made conditional on it (fix connector.version.field, or give the record a version)`
  const where = etagHeader === null ? `no ETag header and no ${LIST_ETAG_FIELDS.join(', ')} member` : 'an empty ETag header'
  return `carries no version: connector.version is {from: etag} and the answer has ${where}, so no change can be made conditional on it (a list answer without per-item ETags needs them as an etag member of each item; else set connector.version to {from: field, field: …} naming a field that changes on every write)`
}

function versionFieldName(ctx: HttpContext): string {
  return ctx.config.version.from === 'field' ? ctx.config.version.field : 'etag'
}

/** A string or finite number as text; anything else is null. */
export function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return null
}
