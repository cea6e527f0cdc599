import { isIP } from 'node:net'
import { configKeyRefusal } from '../../config/config-key.js'
import { WarrantError } from '../../contract/index.js'

/** Host names that only ever serve cloud instance metadata (and its credentials). */
const METADATA_HOSTS: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.goog'])
/** Fixed metadata addresses outside 169.254.0.0/16: Alibaba Cloud, AWS over IPv6. */
const METADATA_IPV4: ReadonlySet<string> = new Set(['100.100.100.200'])
const METADATA_IPV6: readonly (readonly number[])[] = [[0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254]]

/**
 * Parses and checks a source's base URL when the connector is built: http(s) only, no credentials, query or
 * fragment in it, and never a link-local or cloud metadata address, whose answers carry instance credentials.
 *
 * @example assertSafeBaseUrl('eu', 'http://169.254.169.254/latest') // throws WarrantError('invalid_request')
 */
export function assertSafeBaseUrl(source: string, raw: string, key = 'base_url'): URL {
  const refuse = (why: string): never => {
    throw configKeyRefusal(key, `${why} (source "${source}")`, { source })
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return refuse('is not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse(`must be http or https, not ${url.protocol}`)
  if (url.username !== '' || url.password !== '') refuse('must not contain credentials; declare connector.credential instead')
  if (url.search !== '' || url.hash !== '') refuse('must not contain a query or fragment; declare list.query instead')
  const blocked = blockedHostReason(url.hostname)
  if (blocked) refuse(`points to ${blocked} (${url.hostname}); refused: only ordinary upstream hosts may be called`)
  return url
}

/** Why a host may never be called, or null. `hostname` as `URL.hostname` gives it (IPv6 in brackets). */
export function blockedHostReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1')
  if (METADATA_HOSTS.has(host)) return 'a cloud metadata host'
  const family = isIP(host)
  if (family === 4) return ipv4Reason(host)
  if (family === 6) {
    const words = ipv6Words(host)
    if (!words) return 'an unparsable IPv6 address'
    if ((words[0]! & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)'
    if (METADATA_IPV6.some((m) => m.every((w, i) => w === words[i]))) return 'a cloud metadata address'
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) forms
    const mapped = words.slice(0, 5).every((w) => w === 0) && (words[5] === 0xffff || words[5] === 0)
    const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)
    if (mapped || nat64) {
      const v4 = [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.')
      return ipv4Reason(v4)
    }
  }
  return null
}

function ipv4Reason(address: string): string | null {
  if (address.startsWith('169.254.')) return 'a link-local or metadata address (169.254.0.0/16)'
  if (METADATA_IPV4.has(address)) return 'a cloud metadata address'
  return null
}

/** The eight 16-bit words of an IPv6 address, or null. */
function ipv6Words(address: string): number[] | null {
  let text = address.replace(/%.*$/, '')
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = text.slice(0, v4.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16)
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)))
  const head = parse(halves[0]!)
  const tail = halves.length === 2 ? parse(halves[1]!) : []
  const fill = 8 - head.length - tail.length
  if (halves.length === 1 ? fill !== 0 : fill < 0) return null
  const words = [...head, ...new Array<number>(fill).fill(0), ...tail]
  return words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null
}

/**
 * One value as one path segment: percent-encoded, so `/`, `?`, `#` and `%` cannot change the path. A value
 * that would be a dot segment (`.`, `..`) is refused, since URL parsers resolve those even when encoded.
 */
export function encodePathSegment(value: string): string {
  if (value === '' || value === '.' || value === '..')
    throw new WarrantError('invalid_request', `"${value}" cannot be used as a path segment`)
  return encodeURIComponent(value)
}

/** The `{name}` placeholders of a path template, in order. */
export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]!)
}

/**
 * Renders a declared path template; each value becomes one percent-encoded segment.
 *
 * @example renderPathTemplate('/subscriptions/{id}', { id: '../admin' }) // '/subscriptions/..%2Fadmin'
 */
export function renderPathTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    const value = values[name]
    if (value === undefined) throw new WarrantError('invalid_request', `path template ${template} has no value for {${name}}`)
    return encodePathSegment(value)
  })
}

/**
 * Checks a path rendered elsewhere before it is appended to a base URL: it starts with one `/`, has no
 * scheme, backslash, control character, fragment or dot segment (encoded or not).
 */
export function assertRelativePath(path: string): string {
  const refuse = (why: string): never => {
    throw new WarrantError('invalid_request', `upstream path refused: ${why}`)
  }
  if (!path.startsWith('/')) refuse('it must begin with "/"')
  if (path.startsWith('//')) refuse('it must not begin with "//"')
  if (/[\\\u0000-\u001f\u007f\s#]/.test(path)) refuse('it contains a backslash, whitespace, control character or "#"')
  if (/[a-z][a-z0-9+.-]*:\/\//i.test(path)) refuse('it contains a URL scheme')
  const pathname = path.split('?')[0]!
  for (const segment of pathname.split('/')) {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      return refuse('it has an invalid percent-encoding')
    }
    if (decoded === '.' || decoded === '..') refuse('it contains a dot segment')
  }
  return path
}

/**
 * The URL for a path under a base URL (`https://h/v1` + `/items` → `https://h/v1/items`), with query
 * parameters. Throws if the URL parser would normalise the path into something else.
 */
export function resolveUnderBase(base: URL, path: string, query: readonly (readonly [string, string])[] = []): URL {
  assertRelativePath(path)
  const basePath = base.pathname.replace(/\/+$/, '')
  const [pathname, search] = splitQuery(path)
  const url = new URL(base.origin + basePath + pathname)
  if (url.pathname !== basePath + pathname || !isWithinBase(base, url))
    throw new WarrantError('invalid_request', 'upstream path refused: it does not stay under the base URL')
  if (search) for (const [k, v] of new URLSearchParams(search)) url.searchParams.append(k, v)
  for (const [k, v] of query) url.searchParams.append(k, v)
  return url
}

function splitQuery(path: string): [string, string] {
  const at = path.indexOf('?')
  return at < 0 ? [path, ''] : [path.slice(0, at), path.slice(at + 1)]
}

/** Whether a URL (a `Link` header's, a body's next link, a stored position) stays on the base URL's origin and path. */
export function isWithinBase(base: URL, candidate: URL): boolean {
  if (candidate.origin !== base.origin || candidate.username !== '' || candidate.password !== '') return false
  const basePath = base.pathname.replace(/\/+$/, '')
  return basePath === '' || candidate.pathname === basePath || candidate.pathname.startsWith(basePath + '/')
}
