import type { HttpConnectorConfig } from '../../config/schema.js'

/** What the first page of a cursor walk said about its end. */
export interface FirstPageEnd {
  /** The marker at next_cursor_path: a string, an explicit null or "" (the end, said), or undefined (absent). */
  readonly marker: string | null | undefined
  readonly hasMore: boolean | undefined
  /** The total that counts this query, when the upstream gave one. */
  readonly total: number | undefined
  /** Items on the page, before any local filter, and whether a page size went upstream (and which). */
  readonly received: number
  readonly sizeSent: boolean
  readonly asked: number
}

/**
 * A cursor walk's first page that would end it only by being short: non-empty, shorter than the size asked, no
 * cursor at `next_cursor_path` (absent, not null nor ""), no `has_more` false, no total reached, and no
 * `max_page_size` declared. An upstream that caps its pages below the size asked answers that page short while more
 * follow, so the path's silence proves nothing: it may point beside the cursor. Past the first page the walk came
 * by a cursor read at that path, which proves the path, and an absent one there ends the walk as documented; offset
 * and page walks never end on a short page (only on an empty one), and link styles are not judged here. Returns the
 * sentence that refuses the page, or null where the end holds.
 */
export function unprovenShortEnd(list: HttpConnectorConfig['list'], first: boolean, end: FirstPageEnd): string | null {
  const pagination = list.pagination
  if (pagination.style !== 'cursor' || !first || list.max_page_size !== undefined) return null
  if (end.marker !== undefined || end.hasMore === false || end.received === 0 || !end.sizeSent || end.received >= end.asked) return null
  if (end.total !== undefined && end.received >= end.total) return null
  return (
    `the first page holds ${end.received} record(s) of the ${end.asked} asked and no cursor at next_cursor_path "${pagination.next_cursor_path}", ` +
    'and nothing else says it is the last (no has_more false, no total): an upstream that caps its pages below the size asked answers this way while more follow, ' +
    'so this is no proof of the end; set next_cursor_path to where this upstream writes its cursor (an explicit null or "" there ends the walk), ' +
    "or, where the upstream's page cap is known, declare it as max_page_size (a page shorter than that is then the end)"
  )
}
