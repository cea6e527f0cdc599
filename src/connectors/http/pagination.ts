import type { PaginationConfig } from '../../config/schema.js'
import { WarrantError } from '../../contract/index.js'
import { isWithinBase } from './url-guard.js'

/**
 * Where a walk of one source stands, per pagination style. It travels as the opaque `position` string:
 * the cursor itself, the next offset, `page:seen[:firstId]` (page number, items seen before it, and the first id of
 * the page before), the next URL, or the last key as JSON.
 */
export type PagePosition =
  | { readonly style: 'cursor'; readonly cursor: string | null }
  /**
   * `lastId`: the id of the record just before `offset` when the previous page was read. The next read starts one
   * record earlier and must find that record there; otherwise the data moved under the walk. `firstId`: the id of
   * the previous page's first record, when it differs; found there instead, the upstream answered that page again.
   * `boundaryId` (never with `lastId`): the record a read found just before `offset` with nothing after it, so this
   * read starts at `offset` itself; starting with that record again, it is the same record, not the next.
   */
  | { readonly style: 'offset'; readonly offset: number; readonly lastId?: string; readonly firstId?: string; readonly boundaryId?: string }
  /**
   * `firstId`: the id of the previous page's first record. A page that starts with it again is the same page again
   * (an upstream that ignores the page parameter), never the next one.
   */
  | { readonly style: 'page'; readonly page: number; readonly seen: number; readonly firstId?: string }
  | { readonly style: 'link'; readonly url: URL | null }
  /** The key of the last item read (keyset style); null on the first page. Travels as JSON, so 7 and "7" differ. */
  | { readonly style: 'keyset'; readonly key: string | number | null }

/** What one page said about what comes after it. */
export interface PageFacts {
  /** Items the upstream returned on this page, before any local filtering. */
  readonly received: number
  readonly hasMore?: boolean
  readonly total?: number
  /** The next cursor (cursor style) or next link (link_header, next_link), as the upstream wrote it. */
  readonly next: string | null
  /** The URL this page came from, to resolve relative links. */
  readonly requestUrl: URL
  /** Keyset style: the key of the page's last item, or null when it has none that can start the next page. */
  readonly lastKey?: string | number | null
}

/** `capped`: the upstream will not go further (an empty page while it says more remain), as opposed to a broken answer. */
export type Advance = { readonly next: PagePosition | null } | { readonly problem: string; readonly capped?: true }

/** Does a read at this position re-read the previous page's last record first? */
export function overlaps(position: PagePosition): position is PagePosition & { style: 'offset'; lastId: string } {
  return position.style === 'offset' && position.lastId !== undefined && position.offset > 0
}

/** Reads a position string back; a malformed one is the caller's error (`invalid_cursor`). */
export function decodePosition(pagination: PaginationConfig, position: string | null, base: URL): PagePosition {
  const invalid = (why: string): never => {
    throw new WarrantError('invalid_cursor', `position is not valid for ${pagination.style} pagination: ${why}`)
  }
  switch (pagination.style) {
    case 'cursor':
      if (position === '') invalid('empty cursor')
      return { style: 'cursor', cursor: position }
    case 'offset':
      if (position === null) return { style: 'offset', offset: 0 }
      const boundary = /^([1-9][0-9]{0,15})~([A-Za-z0-9_-]{1,2048})$/.exec(position)
      if (boundary) return { style: 'offset', offset: Number(boundary[1]), boundaryId: Buffer.from(boundary[2]!, 'base64url').toString('utf8') }
      const m = /^(0|[1-9][0-9]{0,15})(?::([A-Za-z0-9_-]{1,2048})(?::([A-Za-z0-9_-]{1,2048}))?)?$/.exec(position)
      if (!m) return invalid('expected an offset')
      const offset = Number(m[1])
      if (m[2] === undefined || offset === 0) return { style: 'offset', offset }
      const lastId = Buffer.from(m[2], 'base64url').toString('utf8')
      return m[3] === undefined ? { style: 'offset', offset, lastId } : { style: 'offset', offset, lastId, firstId: Buffer.from(m[3], 'base64url').toString('utf8') }
    case 'page': {
      if (position === null) return { style: 'page', page: pagination.first, seen: 0 }
      const m = /^(-?[0-9]{1,15}):([0-9]{1,15})(?::([A-Za-z0-9_-]{1,2048}))?$/.exec(position)
      if (!m) return invalid('expected page:seen')
      const at = { style: 'page' as const, page: Number(m[1]), seen: Number(m[2]) }
      return m[3] === undefined ? at : { ...at, firstId: Buffer.from(m[3], 'base64url').toString('utf8') }
    }
    case 'keyset': {
      if (position === null) return { style: 'keyset', key: null }
      let key: unknown
      try {
        key = JSON.parse(position)
      } catch {
        return invalid('expected a JSON key')
      }
      if (typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) invalid('expected a string or number key')
      return { style: 'keyset', key: key as string | number }
    }
    case 'link_header':
    case 'next_link': {
      if (position === null) return { style: 'link', url: null }
      let url: URL
      try {
        url = new URL(position)
      } catch {
        return invalid('expected a URL')
      }
      if (!isWithinBase(base, url)) invalid("it is not under the source's base URL")
      return { style: 'link', url }
    }
  }
}

export function encodePosition(position: PagePosition): string | null {
  switch (position.style) {
    case 'cursor':
      return position.cursor
    case 'offset': {
      if (position.lastId === undefined)
        return position.boundaryId === undefined || position.offset === 0 ? String(position.offset) : `${position.offset}~${Buffer.from(position.boundaryId, 'utf8').toString('base64url')}`
      const first = position.firstId === undefined ? '' : `:${Buffer.from(position.firstId, 'utf8').toString('base64url')}`
      return `${position.offset}:${Buffer.from(position.lastId, 'utf8').toString('base64url')}${first}`
    }
    case 'page':
      return position.firstId === undefined ? `${position.page}:${position.seen}` : `${position.page}:${position.seen}:${Buffer.from(position.firstId, 'utf8').toString('base64url')}`
    case 'link':
      return position.url?.href ?? null
    case 'keyset':
      return position.key === null ? null : JSON.stringify(position.key)
  }
}

/** What `{{cursor}}` stands for in a POST body: the cursor, offset, page number or start key; undefined when none. */
export function positionValue(position: PagePosition): string | number | undefined {
  switch (position.style) {
    case 'cursor':
      return position.cursor ?? undefined
    case 'offset':
      return position.offset - (overlaps(position) ? 1 : 0)
    case 'page':
      return position.page
    case 'keyset':
      return position.key ?? undefined
    case 'link':
      return undefined
  }
}

/** Query parameters that select this position (none for a link style's next URL, which carries its own). */
export function positionQuery(pagination: PaginationConfig, position: PagePosition): [string, string][] {
  switch (position.style) {
    case 'cursor':
      return position.cursor === null || pagination.style !== 'cursor' ? [] : [[pagination.param, position.cursor]]
    case 'offset':
      return pagination.style === 'offset' ? [[pagination.offset_param, String(position.offset - (overlaps(position) ? 1 : 0))]] : []
    case 'page':
      return pagination.style === 'page' ? [[pagination.param, String(position.page)]] : []
    case 'link':
      return []
    case 'keyset': {
      if (position.key === null || pagination.style !== 'keyset') return []
      const key = pagination.encoding === 'json' ? JSON.stringify(position.key) : String(position.key)
      return pagination.skip_param ? [[pagination.param, key], [pagination.skip_param, '1']] : [[pagination.param, key]]
    }
  }
}

/**
 * The position after a page, or null when the upstream says the source is exhausted: no next cursor or
 * link, `has_more: false`, an offset or page past `total`, or (offset/page styles with neither has_more nor
 * total) an empty page. A short page alone never ends a walk. A page that cannot be advanced past, or a next
 * link outside the base URL, is a problem, never an end. An end on a page with items is tested by one read past
 * it (`pastEnd`), before the page says it is the last.
 */
export function advance(position: PagePosition, facts: PageFacts, base: URL): Advance {
  const { received, hasMore, total, next } = facts
  if (hasMore === false) return { next: null }
  switch (position.style) {
    case 'cursor': {
      if (next === null) return hasMore === true ? { problem: 'the upstream says it has more but gave no next cursor' } : { next: null }
      return { next: { style: 'cursor', cursor: next } }
    }
    case 'link': {
      if (next === null) return hasMore === true ? { problem: 'the upstream says it has more but gave no next link' } : { next: null }
      let url: URL
      try {
        url = new URL(next, facts.requestUrl)
      } catch {
        return { problem: 'the next link is not a valid URL' }
      }
      if (!isWithinBase(base, url))
        return { problem: `the next link points outside the source's base URL (to ${url.origin}); refused, not followed` }
      return { next: { style: 'link', url } }
    }
    case 'keyset': {
      // a short page never ends a keyset walk: only an empty one (or has_more: false) does
      if (received === 0) return hasMore === true ? { problem: 'the upstream says it has more but returned an empty page; the walk cannot advance' } : { next: null }
      if (facts.lastKey === undefined || facts.lastKey === null)
        return { problem: "the page's last item has no usable key (a string or number at the keyset field); the walk cannot advance" }
      return { next: { style: 'keyset', key: facts.lastKey } }
    }
    case 'offset':
    case 'page': {
      const seen = position.style === 'offset' ? position.offset : position.seen
      if (hasMore === undefined && total !== undefined && seen + received >= total) return { next: null }
      if (hasMore === undefined && total === undefined && received === 0) return { next: null }
      if (received === 0 && (position.style === 'offset' || hasMore === undefined))
        return { problem: `the upstream returned an empty page at ${describe(position)} but says more remain; the walk cannot advance`, capped: true }
      return position.style === 'offset'
        ? { next: { style: 'offset', offset: position.offset + received } }
        : { next: { style: 'page', page: position.page + 1, seen: position.seen + received } }
    }
  }
}

/**
 * What ended a walk that is tested by one read past it: `has_more` false or the total reached on a page with items,
 * or (`origin`) an empty first page with neither, which only the page number being the upstream's first makes the end.
 */
export type EndSignal = 'has_more' | 'total' | 'origin'

/**
 * Where to read once more after a page that `advance` called the last, to test the signal that ended it; null
 * where nothing but a marker ended it (no next cursor or link: there is no position to ask), or an empty page
 * ended it after others (or beside a total or has_more), which is the end as the upstream numbers its pages. Only `has_more: false` and a reached total can end a walk on a page with items, and both are numbers
 * the config may point at the wrong field: a count of this page, or a flag that means something else.
 */
export function pastEnd(position: PagePosition, facts: PageFacts, base: URL): { readonly position: PagePosition; readonly signal: EndSignal } | null {
  const { received, hasMore, next } = facts
  // Page numbers start where the config says, and an upstream counting from one more (json-server's `_page=0`
  // is empty) answers the configured first page with nothing: with no total or has_more to say the list is
  // empty, the page after it tells an empty list from a wrong `pagination.first`.
  if (received === 0)
    return position.style === 'page' && position.seen === 0 && hasMore === undefined && facts.total === undefined
      ? { position: { style: 'page', page: position.page + 1, seen: 0 }, signal: 'origin' }
      : null
  const signal: EndSignal = hasMore === false ? 'has_more' : 'total'
  switch (position.style) {
    case 'cursor':
      return hasMore === false && next !== null ? { position: { style: 'cursor', cursor: next }, signal } : null
    case 'link': {
      if (hasMore !== false || next === null) return null
      let url: URL
      try {
        url = new URL(next, facts.requestUrl)
      } catch {
        return null
      }
      // a link outside the base is never followed, not even to test an end
      return isWithinBase(base, url) ? { position: { style: 'link', url }, signal } : null
    }
    case 'keyset':
      return hasMore === false && facts.lastKey !== undefined && facts.lastKey !== null ? { position: { style: 'keyset', key: facts.lastKey }, signal } : null
    case 'offset':
      return { position: { style: 'offset', offset: position.offset + received }, signal }
    case 'page':
      return { position: { style: 'page', page: position.page + 1, seen: position.seen + received }, signal }
  }
}

function describe(position: PagePosition): string {
  return position.style === 'offset' ? `offset ${position.offset}` : position.style === 'page' ? `page ${position.page}` : 'this position'
}
