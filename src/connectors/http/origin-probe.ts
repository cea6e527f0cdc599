import type { ReadPageRequest, ReadPageResult } from '../connector.js'
import type { HttpContext } from './context.js'
import type { PastEnd } from './end-check.js'
import type { PagePosition } from './pagination.js'

/**
 * Page numbers start where `pagination.first` says (1 unless set). An upstream counting from 0 (Spring's `page=0`)
 * under `first: 1` has a page before it that no walk reads: its first records are missing from every answer, and
 * with no total to fall short of, the walk ends complete (a list of one page: complete and empty). So a walk's first
 * page is followed by one read of page `first - 1`, before it is given. Per source, the answer that proves the origin
 * right is kept for the connector's lifetime (its config does not change under it): a rightly configured walk pays
 * one request, once.
 */
const proven = new WeakMap<HttpContext, Set<string>>()

/** The page to read below the walk's first one, or null: no page-number walk starting here, or already proven. */
export function pageBelowFirst(ctx: HttpContext, request: ReadPageRequest): (PagePosition & { style: 'page' }) | null {
  const pagination = ctx.config.list.pagination
  if (pagination.style !== 'page' || request.position !== null || pagination.first <= 0) return null
  if (proven.get(ctx)?.has(request.source)) return null
  return { style: 'page', page: pagination.first - 1, seen: 0 }
}

/**
 * The walk's first page, once the read of the page below it is known. How an upstream says it has no such page:
 * a 4xx (400, 404, a 422 or an expired position), an empty page, or page `first`'s records again (an upstream that
 * clamps page numbers to its first, json-server 0.17's `_page=0`): the page stands, and the origin is proven where
 * that answer cannot change with the data (a refusal; the clamp; an empty page while page `first` has records).
 * Records there that page `first` does not hold refuse the source (SOURCE_UNAVAILABLE naming pagination.first),
 * never complete. Anything else (no answer, a 5xx, a 429, a 2xx that is not a list page) is that failure: the
 * page is read again later, the walk is not complete until its origin is tested.
 */
export function settleOrigin(ctx: HttpContext, source: string, page: ReadPageResult, firstIds: readonly (string | undefined)[], below: number, probe: ReadPageResult | PastEnd): ReadPageResult {
  const first = below + 1
  const holds = (): ReadPageResult => {
    const sources = proven.get(ctx) ?? new Set<string>()
    sources.add(source)
    proven.set(ctx, sources)
    return page
  }
  if (probe.kind === 'past_end') {
    if (probe.received === 0) return firstIds.length > 0 ? holds() : page
    const known = new Set(firstIds.filter((id) => id !== undefined))
    const others = probe.ids.filter((id) => id === undefined || !known.has(id))
    if (others.length === 0) return holds()
    const named = others.find((id) => id !== undefined)
    return {
      kind: 'refused',
      message: `source "${source}": unexpected list response: page ${below}, below pagination.first ${first}, holds ${others.length} record(s) that page ${first} does not${named === undefined ? '' : ` (first: "${named}")`}: this upstream numbers its pages from ${below} (or lower), and every walk from page ${first} leaves them out; set pagination.first: ${below}`,
      configKey: 'connector.list.pagination.first',
    }
  }
  const status = 'status' in probe ? probe.status : undefined
  if (probe.kind === 'cursor_expired' || ((probe.kind === 'refused' || probe.kind === 'result_limit') && status !== undefined && status >= 400 && status < 500)) return holds()
  if (probe.kind === 'page') return { kind: 'refused', message: `source "${source}": the read of page ${below} gave a page instead of a count` }
  return { ...probe, message: `source "${source}": reading page ${below}, below pagination.first ${first}, to test that the walk starts at this upstream's first page: ${probe.message}` }
}
