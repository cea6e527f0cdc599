import type { ReadPageResult } from '../connector.js'
import type { HttpContext } from './context.js'
import type { EndSignal, PagePosition } from './pagination.js'
import { totalKey } from './paging-signals.js'

/**
 * A walk's end signalled on a page with items (or an empty first page with no signal), and the read that tests it. A total or a has_more flag is a number
 * the config may point at the wrong field (`{items, count}` where `count` is this page's size; a `more` flag that
 * means something else): trusted, it would end the walk after the first page and call it whole. A page shorter
 * than asked proves no end either: the upstream may cap its pages below the size asked.
 */
export interface EndToConfirm {
  /** Where the walk would have gone on, with the page's last id so the read past the end re-checks it. */
  readonly position: PagePosition
  readonly signal: EndSignal
  /** The items of the page that ended the walk, before any local filter. */
  readonly received: number
}

/** What a read that only counts found (past a signalled end, or below the first page): the items there, before any local filter, and their ids. */
export interface PastEnd {
  readonly kind: 'past_end'
  readonly received: number
  readonly ids: readonly (string | undefined)[]
}

type Page = Extract<ReadPageResult, { kind: 'page' }>

/**
 * The page that ended the walk, once the read past it is known. Nothing there: the end holds, the page stands.
 * Items there: the signal does not count this list, and the source is refused (SOURCE_UNAVAILABLE), never
 * walked on as if the signal were right, never called complete. A read that failed is that failure: the page
 * is read again later, the walk is not complete until its end is tested.
 */
export function settleEnd(ctx: HttpContext, source: string, ended: Page, end: EndToConfirm, past: ReadPageResult | PastEnd): ReadPageResult {
  if (past.kind === 'page') return { kind: 'refused', message: `source "${source}": the read past the end gave a page instead of a count` }
  if (past.kind !== 'past_end') return { ...past, message: `source "${source}": reading one page past the end it signalled: ${past.message}` }
  if (past.received === 0) return ended
  const list = ctx.config.list
  if (end.signal === 'origin' && end.position.style === 'page')
    return {
      kind: 'refused',
      message: `source "${source}": unexpected list response: page ${end.position.page - 1} (pagination.first) answered no record, yet page ${end.position.page} has ${past.received}: this upstream does not number its first page ${end.position.page - 1}, and a walk from there ends at once with nothing; set pagination.first to the number of its first page`,
      configKey: 'connector.list.pagination.first',
    }
  const more = `on a page of ${end.received}, yet the page after it has ${past.received} more record(s)`
  if (end.signal === 'has_more')
    return {
      kind: 'refused',
      message: `source "${source}": unexpected list response: has_more_path "${list.has_more_path}" said no more ${more}: it does not say whether more pages follow; point it at the field that does, or leave it out`,
      configKey: 'connector.list.has_more_path',
    }
  return {
    kind: 'refused',
    message: `source "${source}": unexpected list response: ${totalKey(list)} said the end ${more}: it does not count this list (a count of one page?); point it at the number of matching records, or leave it out`,
    configKey: list.total_path !== undefined ? 'connector.list.total_path' : 'connector.list.total_header',
  }
}
