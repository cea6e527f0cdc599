import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { WarrantError, decodeUtf8Marking, hasLoneSurrogate, holdsMarkedByte } from '../contract/index.js'
import { refuseDotSegments } from './dot-segments.js'

/** Default largest request body: a few MB holds any honest request (10,000 ids in a filter is ~200 KB). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
/** Deepest nesting of a JSON body: a filter is three levels deep; 32 leaves room and stops a stack-eater. */
export const MAX_JSON_DEPTH = 32

export interface InputGuardOptions {
  readonly maxBodyBytes?: number
  /**
   * Leave the JSON body's text and nesting to the route, which inspects it itself and answers in its own protocol:
   * /mcp, where a tool's arguments are refused as an `isError` result (as over stdio) and the rest of a message as
   * a JSON-RPC error with its id. This door's answer there, an HTTP error body, is no JSON-RPC message at all.
   */
  readonly routeInspectsJson?: boolean
  /** The body of this door's refusals, where the route's protocol is not the HTTP error body (/mcp: a JSON-RPC error). */
  readonly refusalBody?: (refusal: WarrantError) => unknown
  /**
   * The whole answer to this door's refusals, where the route's audience is no API client: the review pages, read in
   * a browser, answer an HTML page naming the problem (same status) rather than the JSON error body.
   */
  readonly refusalPage?: (c: Context, refusal: WarrantError) => Response | Promise<Response>
}

/**
 * The door every request passes before any route: a body over the limit is `payload_too_large` (413) and is
 * not read past the limit; a path, query or JSON body holding a NUL byte or a lone UTF-16 surrogate (no
 * upstream, store or digest can hold one faithfully), or a JSON body nested deeper than {@link MAX_JSON_DEPTH},
 * is `invalid_request` (400) naming where. Nothing runs behind a refusal, so nothing changes.
 */
export function inputGuard(options: InputGuardOptions = {}): MiddlewareHandler[] {
  const maxSize = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const limit = bodyLimit({
    maxSize,
    // Answered here, with the connection closed: the rest of the body is never read
    onError: async (c) => {
      const refusal = new WarrantError('payload_too_large', `the request body is larger than ${maxSize} bytes, the most this gateway accepts (server.max_body_bytes)`, { max_bytes: maxSize })
      if (options.refusalPage) return withHeader(await pagedRefusal(c, refusal, options.refusalPage), 'connection', 'close')
      return c.json((options.refusalBody ?? ((r: WarrantError) => r.toBody()))(refusal), 413, { connection: 'close' })
    },
  })
  const check: MiddlewareHandler = async (c, next) => {
    try {
      refuseDotSegments(c)
      refuseBadRequestLine(c.req.url, c.req.queries())
      refuseContentEncoding(c.req.header('content-encoding'))
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD') refuseCharset(c.req.header('content-type'))
    } catch (error) {
      if (options.refusalBody && error instanceof WarrantError) return c.json(options.refusalBody(error), error.status as 400)
      if (options.refusalPage && error instanceof WarrantError) return await pagedRefusal(c, error, options.refusalPage)
      throw error
    }
    if (!options.routeInspectsJson && c.req.method !== 'GET' && c.req.method !== 'HEAD' && /json/i.test(c.req.header('content-type') ?? '')) {
      try {
        const text = await bodyText(c.req)
        let parsed: unknown
        try {
          parsed = text.trim() === '' ? undefined : JSON.parse(text)
        } catch {
          parsed = undefined // malformed JSON: the route refuses it, naming the parse error
        }
        if (parsed !== undefined) inspectJson(parsed)
      } catch (error) {
        if (options.refusalPage && error instanceof WarrantError) return await pagedRefusal(c, error, options.refusalPage)
        throw error
      }
    }
    await next()
  }
  return [limit, check]
}

/** The refusal answered by `page`, kept on the context as a thrown one is, so the audit row names its code. */
async function pagedRefusal(c: Context, refusal: WarrantError, page: NonNullable<InputGuardOptions['refusalPage']>): Promise<Response> {
  c.error = refusal
  return await page(c, refusal)
}

function withHeader(response: Response, name: string, value: string): Response {
  response.headers.set(name, value)
  return response
}

/**
 * The path and query: valid percent-encoded UTF-8, no NUL byte, no lone surrogate. A query part that does not decode
 * is refused as the path is: the router keeps it as its literal text (`%FF`), a value nobody sent.
 */
function refuseBadRequestLine(url: string, queries: Record<string, string[]>): void {
  const parsed = new URL(url)
  let path: string
  try {
    path = decodeURIComponent(parsed.pathname)
  } catch {
    throw new WarrantError('invalid_request', 'the request path is not valid percent-encoded UTF-8', { field: 'path' })
  }
  refuseBadText(path, 'path')
  for (const part of parsed.search.slice(1).split('&')) {
    const [name = '', value = ''] = part.split(/=(.*)/s)
    if (!decodes(name)) throw new WarrantError('invalid_request', 'a query parameter name is not valid percent-encoded UTF-8', { field: 'query' })
    if (!decodes(value)) throw new WarrantError('invalid_request', `query parameter "${decodeURIComponent(name)}" is not valid percent-encoded UTF-8`, { field: decodeURIComponent(name) })
  }
  for (const [name, values] of Object.entries(queries)) {
    refuseBadText(name, `query parameter name`)
    for (const value of values) refuseBadText(value, `query parameter "${name}"`)
  }
}

/**
 * The body as text, refused when it is not UTF-8 (JSON's one encoding, RFC 8259): read as UTF-8 anyway, each such
 * byte would become U+FFFD and the request would ask about, or write, a value nobody sent. The refusal names the
 * member holding the byte, or its offset when it lies outside any string (the text is then no JSON either).
 */
async function bodyText(request: { arrayBuffer(): Promise<ArrayBuffer>; text(): Promise<string> }): Promise<string> {
  const bytes = new Uint8Array(await request.arrayBuffer())
  const { text, firstBadByte } = decodeUtf8Marking(bytes)
  if (firstBadByte === null) return await request.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (parsed !== undefined) inspectJson(parsed) // names the member holding the byte
  const byte = `0x${bytes[firstBadByte]!.toString(16).padStart(2, '0')}`
  throw new WarrantError('invalid_request', `the request body is not UTF-8 text: byte ${firstBadByte} (${byte}) is no part of a UTF-8 character; send JSON encoded as UTF-8`, { field: 'body', byte_offset: firstBadByte, byte })
}

/**
 * A request body is taken as sent, never decompressed: one in another coding than identity is refused naming the
 * header, rather than read as the bytes it is (a gzip body "malformed JSON"; a plain body labelled gzip answered as
 * if the label were not there).
 */
function refuseContentEncoding(encoding: string | undefined): void {
  const coding = encoding?.trim().toLowerCase()
  if (coding === undefined || coding === '' || coding === 'identity') return
  throw new WarrantError('invalid_request', `the request body is sent with Content-Encoding: ${encoding}; this gateway takes request bodies uncompressed: send it without the header`, { field: 'content-encoding' })
}

/**
 * A JSON or form body is read as UTF-8 (JSON's one encoding; the review forms are served as UTF-8): one declared in
 * another charset is refused 415 naming it, rather than read as UTF-8 and its text taken as something nobody sent.
 * `utf-8` and `utf8`, in any case, quoted or not, are UTF-8; a body that declares no charset is read as UTF-8.
 */
function refuseCharset(contentType: string | undefined): void {
  if (contentType === undefined || !/^\s*(application\/([\w.+-]*\+)?json|application\/x-www-form-urlencoded)\s*(;|$)/i.test(contentType)) return
  for (const parameter of contentType.split(';').slice(1)) {
    const [name = '', ...rest] = parameter.split('=')
    if (name.trim().toLowerCase() !== 'charset') continue
    const charset = rest.join('=').trim().replace(/^"(.*)"$/s, '$1')
    if (/^utf-?8$/i.test(charset)) continue
    const mediaType = contentType.split(';')[0]!.trim()
    throw new WarrantError('unsupported_media_type', `the request body is declared in charset ${charset}; this gateway reads ${mediaType} as UTF-8 only: send it encoded as UTF-8, with charset=utf-8 or no charset`, {
      field: 'content-type',
      charset,
    })
  }
}

/** Whether a percent-encoded text decodes as UTF-8. */
function decodes(text: string): boolean {
  try {
    decodeURIComponent(text)
    return true
  } catch {
    return false
  }
}

function refuseBadText(text: string, where: string): void {
  if (text.includes('\u0000')) throw new WarrantError('invalid_request', `${where} holds a NUL byte`, { field: where })
  // a byte that is not UTF-8 is read as such a surrogate (decodeUtf8Marking), never as U+FFFD
  if (holdsMarkedByte(text)) throw new WarrantError('invalid_request', `${where} holds bytes that are not UTF-8, or an unpaired UTF-16 surrogate (not valid Unicode text)`, { field: where })
  if (hasLoneSurrogate(text)) throw new WarrantError('invalid_request', `${where} holds an unpaired UTF-16 surrogate (not valid Unicode text)`, { field: where })
}

/**
 * Refuses a parsed JSON value that holds a NUL byte or a lone surrogate in any key or string, a `__proto__`
 * key anywhere (any plain-object copy turns it into a prototype and the member silently vanishes), or
 * nesting past {@link MAX_JSON_DEPTH}. Shared by every surface that parses JSON (HTTP, MCP). `depth`: how deep
 * `value` sits in what was sent (a part inspected alone, e.g. a JSON-RPC message's params, counts from there).
 */
export function inspectJson(value: unknown, root = 'body', depth = 0): void {
  inspect(value, root, depth)
}

function inspect(value: unknown, path: string, depth: number): void {
  if (typeof value === 'string') return refuseBadText(value, path)
  if (value === null || typeof value !== 'object') return
  if (depth >= MAX_JSON_DEPTH) throw new WarrantError('invalid_request', `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels (at ${path})`, { field: path, max_depth: MAX_JSON_DEPTH })
  if (Array.isArray(value)) {
    value.forEach((item, i) => inspect(item, `${path}[${i}]`, depth + 1))
    return
  }
  for (const [key, member] of Object.entries(value)) {
    refuseBadText(key, `${path} key`)
    if (key === '__proto__') throw new WarrantError('invalid_request', `${path} has a "__proto__" key: a reserved name, never a field or parameter`, { field: `${path}.__proto__` })
    inspect(member, `${path}.${key}`, depth + 1)
  }
}
