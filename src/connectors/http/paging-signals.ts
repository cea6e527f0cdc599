import type { HttpConnectorConfig } from '../../config/schema.js'
import { readPath } from './json-path.js'
import { nextLinkOf } from './link-header.js'

/**
 * What one list answer says about paging, read where the config declares it. A declared signal the answer does
 * not carry is never taken for "no more" or "not flagged": the config does not match the upstream, and a walk
 * that went on as if it did could call a first page the whole list.
 */
export interface PagingSignals {
  readonly hasMore?: boolean
  readonly total?: number
  /**
   * The next cursor or link as the upstream wrote it: null for an explicit end (null, "", a Link header without
   * `rel="next"`), undefined when the key at the declared path (or any Link header) is not in the answer at all.
   */
  readonly marker: string | null | undefined
  /** The upstream's own flag (`incomplete_flag`) says the page was cut short. */
  readonly flagged: boolean
}

/**
 * Reads the signals. `payload` is the redacted body; `raw` the body as sent, for the marker: one that carries
 * the credential is refused by the caller, never passed on altered.
 */
export function readPagingSignals(
  list: HttpConnectorConfig['list'],
  payload: unknown,
  raw: unknown,
  headers: Headers,
  rounded: ReadonlySet<number> = new Set(),
): PagingSignals | { readonly problem: string; readonly configKey?: string } {
  const problem = (why: string) => ({ problem: why })
  let hasMore: boolean | undefined
  if (list.has_more_path !== undefined) {
    const value = readPath(payload, list.has_more_path)
    if (value === undefined) return problem(`has_more_path "${list.has_more_path}" is missing from the answer; set it to where this upstream says whether more pages follow`)
    if (typeof value === 'boolean') hasMore = value
    else if (value !== null) return problem(`has_more_path "${list.has_more_path}" is not a boolean`)
  }
  let total: number | undefined
  if (list.total_path !== undefined) {
    const value = readPath(payload, list.total_path)
    const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
    // absent is the path misread, as for has_more_path: a walk would go on as if no total had been declared; null
    // is the upstream's own "not counted"
    if (value === undefined)
      return { problem: `total_path "${list.total_path}" is missing from the answer; set it to where this upstream says how many records match, or leave it out`, configKey: 'connector.list.total_path' }
    if (typeof n === 'number' && Number.isInteger(n) && n >= 0) total = n
    else if (value !== null) return problem(`total_path "${list.total_path}" is not a count`)
  } else if (list.total_header !== undefined) {
    const value = headers.get(list.total_header)
    if (value === null)
      return { problem: `total_header ${list.total_header} is missing from the answer; set it to the header where this upstream says how many records match, or leave it out`, configKey: 'connector.list.total_header' }
    if (/^\d+$/.test(value.trim())) total = Number(value.trim())
    else return problem(`header ${list.total_header} is not a count: "${value.slice(0, 40)}"`)
  }
  // a 64-bit cursor JSON.parse rounded names a position the upstream never gave: the walk would resume elsewhere
  const key = markerKey(list)
  const cursor = list.pagination.style === 'cursor' ? list.pagination.next_cursor_path : list.pagination.style === 'next_link' ? list.pagination.path : undefined
  const written = cursor === undefined ? undefined : readPath(raw, cursor)
  if (typeof written === 'number' && rounded.has(written))
    return problem(`${key} holds a number past 2^53, which a JSON number cannot carry exactly, so the position it names is not known; point it at the cursor's string form (such as next_cursor_str), or have the upstream send it as a string`)
  let flagged = false
  if (list.incomplete_flag !== undefined) {
    const value = readPath(payload, list.incomplete_flag.path)
    if (value === undefined)
      return problem(`incomplete_flag.path "${list.incomplete_flag.path}" is missing from the answer; set it to where this upstream flags an answer it cut short`)
    if (typeof value !== 'boolean' && value !== null) return problem(`incomplete_flag.path "${list.incomplete_flag.path}" is not a boolean`)
    flagged = value === true
  }
  return { ...(hasMore === undefined ? {} : { hasMore }), ...(total === undefined ? {} : { total }), marker: nextMarker(list, raw, headers), flagged }
}

/** The config key that says where the next marker is, as a message names it; null for styles without one in the body. */
export function markerKey(list: HttpConnectorConfig['list']): string | null {
  const pagination = list.pagination
  if (pagination.style === 'cursor') return `pagination.next_cursor_path "${pagination.next_cursor_path}"`
  if (pagination.style === 'next_link') return `pagination.path "${pagination.path}"`
  return null
}

/** The config key the total comes from, as a message names it. */
export function totalKey(list: HttpConnectorConfig['list']): string {
  return list.total_path !== undefined ? `total_path "${list.total_path}"` : `total_header ${list.total_header ?? ''}`
}

/** The upstream's own marker for what follows: a cursor, a body link or a `Link` header target. */
function nextMarker(list: HttpConnectorConfig['list'], raw: unknown, headers: Headers): string | null | undefined {
  const pagination = list.pagination
  switch (pagination.style) {
    case 'cursor':
      return markerText(readPath(raw, pagination.next_cursor_path))
    case 'next_link':
      return markerText(readPath(raw, pagination.path))
    case 'link_header': {
      // a Link header without rel="next" is how this style says "the end"; no Link header at all is the marker
      // absent, as a cursor path the answer lacks: an upstream paging some other way sends none on any page
      const header = headers.get('link')
      return header === null ? undefined : nextLinkOf(header)
    }
    default:
      return null
  }
}

/** An explicit null or "" is the end; a value that is no cursor at all (an object, a list) counts as absent. */
function markerText(value: unknown): string | null | undefined {
  if (value === null) return null
  if (typeof value === 'string') return value === '' ? null : value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}
