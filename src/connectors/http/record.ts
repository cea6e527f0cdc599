import type { SourceRecord } from '../connector.js'
import type { HttpContext } from './context.js'

/** Item fields that carry an entity tag when a list has no per-item ETag header. */
const LIST_ETAG_FIELDS = ['etag', '_etag', 'version'] as const

/**
 * One upstream object as a record: its id from `id_field`, its version from the configured field or, for
 * `version.from: etag`, the response's ETag header (single reads) or an `etag`/`_etag`/`version` item field
 * (lists), else "". The object must already be redacted.
 */
export function toRecord(ctx: HttpContext, item: unknown, etagHeader: string | null): { readonly record: SourceRecord } | { readonly problem: string } {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return { problem: 'an item is not a JSON object' }
  const fields = item as Record<string, unknown>
  const idField = ctx.resource.id_field
  const id = scalarText(fields[idField])
  if (id === null || id === '') return { problem: `an item has no usable id field "${idField}"` }
  const version = versionOf(ctx, fields, etagHeader)
  if (version === null) return { problem: `item "${id}" has no version field "${versionField(ctx)}"` }
  return { record: { id, version, fields } }
}

function versionOf(ctx: HttpContext, fields: Record<string, unknown>, etagHeader: string | null): string | null {
  const version = ctx.config.version
  if (version.from === 'field') return scalarText(fields[version.field])
  if (etagHeader !== null) return ctx.redact.text(etagHeader)
  for (const name of LIST_ETAG_FIELDS) {
    const value = scalarText(fields[name])
    if (value !== null) return value
  }
  return ''
}

function versionField(ctx: HttpContext): string {
  return ctx.config.version.from === 'field' ? ctx.config.version.field : 'etag'
}

/** A string or finite number as text; anything else is null. */
export function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return null
}
