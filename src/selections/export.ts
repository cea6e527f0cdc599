import type { ExportFormat } from './schemas.js'
import type { SelectionMember } from './selection-service.js'

/** Members fetched per export page. */
export const EXPORT_PAGE = 1000

/**
 * The whole manifest as a byte stream, one page of members per pull: memory holds one page, whatever the
 * size of the selection. CSV has a header row of the selection's review fields (then the frozen version);
 * NDJSON has one member per line, exactly as the records pages give them.
 */
export function manifestStream(
  format: ExportFormat,
  fields: readonly string[],
  page: (afterOrd: number, limit: number) => Promise<readonly SelectionMember[]>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const versionColumn = uniqueColumn('frozen_version', fields)
  let after = 0
  let started = false
  let done = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (done) return
        if (!started && format === 'csv') {
          started = true
          controller.enqueue(encoder.encode(csvLine([...fields, versionColumn])))
          return
        }
        started = true
        const members = await page(after, EXPORT_PAGE)
        if (members.length > 0) {
          const text =
            format === 'csv'
              ? members.map((m) => csvLine([...fields.map((f) => m.fields[f]), m.version])).join('')
              : members.map((m) => `${JSON.stringify({ ord: m.ord, id: m.id, version: m.version, fields: pick(m.fields, fields) })}\n`).join('')
          controller.enqueue(encoder.encode(text))
          after = members[members.length - 1]!.ord
        }
        if (members.length < EXPORT_PAGE) {
          done = true
          controller.close()
        }
      },
    },
    { highWaterMark: 1 },
  )
}

function pick(values: Readonly<Record<string, unknown>>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) out[f] = values[f] ?? null
  return out
}

function uniqueColumn(name: string, taken: readonly string[]): string {
  let out = name
  while (taken.includes(out)) out = `_${out}`
  return out
}

/** One RFC 4180 line, CRLF-terminated. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`
}

/**
 * One cell: null is empty, lists and objects are JSON, text that a spreadsheet would run as a formula
 * (`=`, `+`, `-`, `@`, tab, CR at the start) is prefixed with `'` (OWASP CSV injection), and a cell with a
 * comma, quote or line break is quoted with its quotes doubled.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  let text: string
  if (typeof value === 'string') text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  else if (typeof value === 'object') text = JSON.stringify(value)
  else text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/**
 * The headers a streamed manifest is sent with, on every surface: a download, never cached, naming the
 * selection, its count, digest and completeness so a saved file can be checked against what was approved.
 */
export function manifestHeaders(exported: {
  readonly contentType: string
  readonly filename: string
  readonly selection: { readonly selection_id: string; readonly count: number; readonly digest: string; readonly complete: boolean }
}): Record<string, string> {
  return {
    'content-type': exported.contentType,
    'content-disposition': `attachment; filename="${exported.filename}"`,
    'cache-control': 'no-store',
    'x-warrant-selection-id': exported.selection.selection_id,
    'x-warrant-selection-count': String(exported.selection.count),
    'x-warrant-selection-digest': exported.selection.digest,
    'x-warrant-selection-complete': String(exported.selection.complete),
  }
}
