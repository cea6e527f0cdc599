import { WarrantError } from '../contract/index.js'
import type { SelectionContext } from './context.js'

/** A frozen row as a page shows it: only the selection's fields, each present (null when the record lacked it). */
export interface PagedRow {
  readonly ord: number
  readonly id: string
  readonly version: string | null
  readonly fields: Readonly<Record<string, unknown>>
}

export function memberView(m: PagedRow, fields: readonly string[]) {
  return { ord: m.ord, id: m.id, version: m.version, fields: project(m.fields, fields) }
}

/** Null once the list is exhausted, so a client never fetches an empty last page. */
export function nextCursor(ctx: SelectionContext, selectionId: string, list: string, page: readonly PagedRow[], limit: number, total: number): string | null {
  const last = page[page.length - 1]
  return last && page.length === limit && last.ord < total ? ctx.cursors.encode(selectionId, list, last.ord) : null
}

export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return 100
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new WarrantError('invalid_request', 'limit must be an integer from 1 to 1000', { field: 'limit' })
  return limit
}

function project(values: Readonly<Record<string, unknown>>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) out[f] = values[f] ?? null
  return out
}
