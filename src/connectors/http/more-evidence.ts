import type { HttpConnectorConfig } from '../../config/schema.js'
import { readPath } from './json-path.js'
import { parseLinkHeader } from './link-header.js'

/**
 * Where an answer that ended a walk for lack of a next cursor or link says elsewhere that more follow. The
 * walk trusts the configured path's silence only on a short page, and an upstream that caps its pages below
 * the size asked answers every page short: a `next_cursor_path` pointing beside the upstream's cursor then
 * ends the walk after its first page. The answer itself usually says so, under a key any paging API uses.
 */

/** Keys (lower case, letters and digits only) that hold the next cursor, token or link when the list goes on. */
const MARKER_KEYS = new Set([
  'next',
  'nextcursor',
  'nextpagecursor',
  'nextpagetoken',
  'nexttoken',
  'nextpage',
  'nextkey',
  'nexturl',
  'nextlink',
  'nextpageurl',
  'nexthref',
  'odatanextlink',
  // Azure's body continuation, S3's ListObjectsV2 and ListObjects (v1) markers
  'continuationtoken',
  'nextcontinuationtoken',
  'nextmarker',
  // Salesforce's query locator
  'nextrecordsurl',
])

/**
 * Keys that hold the next position only as an opaque token (Airtable's `offset: "itr…/rec…"`): a number, or a
 * string of digits, there is where this page started, which many envelopes echo (`{offset: 20, limit: 10}`).
 */
const TOKEN_KEYS = new Set(['offset'])

/** Members of an object under a marker key that hold what follows: HAL's `href`, HubSpot's `paging.next.after`. */
const LINK_MEMBERS = ['href', 'url', 'link', 'after', 'cursor', 'token'] as const

/** Keys that say, as `true`, that more follow. */
const FLAG_KEYS = new Set(['hasmore', 'hasnext', 'hasnextpage', 'hasmorepages', 'hasmoreitems', 'moreavailable', 'istruncated', 'morerecords'])

/** Keys that say, as `false`, that more follow: Salesforce's `done`, Jira's `isLast`. */
const LAST_KEYS = new Set(['done', 'islast'])

/** Response headers that carry what follows: GitLab's `X-Next-Page`, `X-Next-Cursor`, Cosmos DB's `x-ms-continuation`. */
const NEXT_HEADER = /^x-(ms-)?(next($|-)|continuation($|-token$))/

/** How deep the body is searched: `meta.paging.next` is as far as any envelope nests its paging signals. */
const MAX_DEPTH = 3

const normalized = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '')

/**
 * A sentence naming what in the answer says more follow, or null when nothing does. `payload` is the redacted
 * body (values are quoted); the items array is not searched, so no record's own fields count.
 */
export function evidenceOfMore(list: HttpConnectorConfig['list'], payload: unknown, headers: Headers): string | null {
  const items = readPath(payload, list.items_path)
  const found: string[] = []
  const denied = { said: false }
  search(payload, '', 1, items, found, denied)
  // An answer that says "no more" under a has-more key (Zendesk: `meta.has_more: false` beside a `links.next` it
  // always writes) has said where it ends: only a flag that is true still counts against it.
  if (denied.said) found.splice(0, found.length, ...found.filter((f) => f.endsWith('is true')))
  const link = headers.get('link')
  if (link !== null) {
    for (const { target, rels } of parseLinkHeader(link)) {
      // in link_header style an exact rel="next" is the marker itself; any other style reads the body, and
      // there a rel="next" is the upstream paging by header instead
      const other = rels.filter((r) => (r === 'next' ? list.pagination.style !== 'link_header' : /next/.test(r)))
      if (other.length > 0 && target !== '') found.push(`a Link header with rel="${other[0]}" (${clip(target)})`)
    }
  }
  for (const [name, value] of headers) if (NEXT_HEADER.test(name) && value.trim() !== '') found.push(`header ${name}: ${clip(value)}`)
  return found.length === 0 ? null : found.slice(0, 3).join('; ')
}

function search(value: unknown, at: string, depth: number, items: unknown, found: string[], denied: { said: boolean }): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value === items) return
  for (const [key, child] of Object.entries(value)) {
    const path = at === '' ? key : `${at}.${key}`
    const name = normalized(key)
    if (child === items) continue
    if ((FLAG_KEYS.has(name) && child === false) || (LAST_KEYS.has(name) && child === true)) denied.said = true
    if (FLAG_KEYS.has(name) && child === true) found.push(`"${path}" is true`)
    else if (LAST_KEYS.has(name) && child === false) found.push(`"${path}" is false`)
    else if (name === 'links' && Array.isArray(child)) {
      // HATEOAS link lists (PayPal): `links: [{href, rel: "next"}]`
      const next = child.find((l) => l !== null && typeof l === 'object' && typeof l.rel === 'string' && l.rel.toLowerCase().split(/\s+/).includes('next') && isMarker(l.href ?? l.url))
      if (next !== undefined) found.push(`"${path}" holds a rel="next" link ${clip(String(next.href ?? next.url))}`)
    }
    else if (MARKER_KEYS.has(name) && isMarker(child)) found.push(`"${path}" holds ${clip(String(child))}`)
    else if (TOKEN_KEYS.has(name) && typeof child === 'string' && child.trim() !== '' && !/^\d+$/.test(child.trim())) found.push(`"${path}" holds ${clip(child)}`)
    else if (MARKER_KEYS.has(name) && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      // a link object: HAL's `_links.next.href`, HubSpot's `paging.next.after`
      const member = LINK_MEMBERS.find((m) => Object.hasOwn(child, m) && isMarker((child as Record<string, unknown>)[m]))
      if (member !== undefined) found.push(`"${path}.${member}" holds ${clip(String((child as Record<string, unknown>)[member]))}`)
    }
    if (depth < MAX_DEPTH) search(child, path, depth + 1, items, found, denied)
  }
}

/** A value that can only mean "here is what follows": a non-empty string or a number. */
function isMarker(value: unknown): boolean {
  return (typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value))
}

function clip(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)
}
