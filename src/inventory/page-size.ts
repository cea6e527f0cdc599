import { WarrantError } from '../contract/index.js'
import type { Connector } from '../connectors/connector.js'
import type { DecodedCursor } from './cursor-codec.js'

/**
 * The page size of this walk. Over page numbers (`sizedPositions`) it is one size for the whole walk: the first
 * part's (no larger than its item budget), which its cursor carries and every continuation keeps, whatever page
 * size the continuation asks: page 3 of 200 after pages of 100 skipped records 200 to 399, and a walk whose
 * upstream gave no total ended "complete" without them.
 */
export function walkPageSize(connector: Connector, asked: number, maxItems: number, prior: DecodedCursor | null): number {
  if (!connector.sizedPositions) return asked
  if (prior === null) return Math.max(1, Math.min(asked, maxItems))
  // an expired cursor resumes nothing: it is answered CURSOR_EXPIRED, at the size asked
  if (prior.pageSize === undefined && prior.expired) return Math.max(1, Math.min(asked, maxItems))
  if (prior.pageSize === undefined)
    throw new WarrantError(
      'invalid_cursor',
      'the cursor does not say the page size its walk read page numbers at (it was issued before cursors carried it), so the page it continues at cannot be known: start a new walk',
      { reason: 'malformed' },
    )
  return prior.pageSize
}

/**
 * How many records to ask for next. Where positions hold at any size, no more than the item budget still allows,
 * so a page rarely overshoots it; whatever a page returns is kept whole (never drop what was received: the cursor
 * resumes after the page). Over page numbers, always the walk's one size (see `budgetAllows`).
 */
/**
 * Whether the item budget lets the walk read another page. Over page numbers a page cannot be trimmed to what the
 * budget has left, so the walk stops before a page that would pass it: a part answers fewer records than
 * `max_items` rather than more, and its cursor continues at that page.
 */
export function budgetAllows(connector: Connector, pageSize: number, maxItems: number, returned: number): boolean {
  if (returned >= maxItems) return false
  return !connector.sizedPositions || returned === 0 || returned + pageSize <= maxItems
}

export function sizeOfNextPage(connector: Connector, pageSize: number, budgetLeft: number): number {
  return connector.sizedPositions ? pageSize : Math.max(1, Math.min(pageSize, budgetLeft))
}
