import { duplicateKeysOf, roundedNumbersOf, type DuplicateKey } from '../../contract/index.js'
import { mediaTypeOf } from './body-text.js'
import type { HttpContext } from './context.js'
import { deniedScrubber } from './denied-values.js'
import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth.js'
import { parseRetryAfter, DEFAULT_RETRY_AFTER_SECONDS } from './retry-after.js'
import type { NetworkReach, UpstreamExchange } from './upstream-request.js'

/** Longest piece of an upstream error body quoted in a message. */
const SNIPPET_CHARS = 200

/**
 * The JSON of a body, or not ok when it is absent, empty or not JSON. `rounded` holds the numbers that stand for
 * a literal of the body a double cannot hold (a 64-bit integer, a decimal of more than 15 significant digits):
 * `JSON.parse` read 12345678901234567.89 as 12345678901234568 and 2^53 + 1 as 2^53 without a word, so a field
 * holding one of these values shows a number the upstream never sent, and a replacing write would send it back
 * changed. Empty for almost every body (a quick scan finds no run of 16 digits). `duplicates` holds the keys an
 * object names twice: `JSON.parse` kept the last value, the upstream may mean the first (see duplicate-members.ts).
 */
export function parseJsonBody(
  body: string | null,
): { readonly ok: true; readonly value: unknown; readonly rounded: ReadonlySet<number>; readonly duplicates: readonly DuplicateKey[] } | { readonly ok: false; readonly tooDeep?: true } {
  if (body === null || body.trim() === '') return { ok: false }
  let value: unknown
  try {
    value = JSON.parse(body) as unknown
  } catch {
    return { ok: false }
  }
  // the walks over the value from here on recurse (see json-depth.ts)
  if (nestedDeeperThan(value)) return { ok: false, tooDeep: true }
  return { ok: true, value, rounded: roundedNumbersOf(body), duplicates: duplicateKeysOf(body, value) }
}

/** Why an exchange produced no usable answer, naming the source. Null when there is a response to read. */
export function failureMessage(ctx: HttpContext, source: string, result: UpstreamExchange): string | null {
  switch (result.kind) {
    case 'response':
      return null
    case 'timeout':
      if (result.connecting) return `source "${source}" could not be reached: no connection within ${ctx.config.timeout_ms} ms (timeout_ms)`
      return `source "${source}" did not answer within ${ctx.config.timeout_ms} ms (timeout_ms)`
    case 'aborted':
      return `the request to source "${source}" was cancelled by the caller`
    case 'network':
      return networkMessage(source, result.reach, ctx.redact.text(result.detail))
    case 'too_large':
      return `the response of source "${source}" (status ${result.status}) was cut at the byte limit (max_response_bytes ${ctx.config.max_response_bytes}); nothing of it was used`
  }
}

/**
 * A network failure as far as it got. Only one before any connection says "could not be reached": an upstream
 * that answered and then cut its body, or closed the connection on a request it received, got the request.
 */
function networkMessage(source: string, reach: NetworkReach | null, detail: string): string {
  switch (reach?.stage) {
    case undefined:
      return `source "${source}" gave no answer (${detail})`
    case 'connecting':
      return `source "${source}" could not be reached (${detail})`
    case 'sending':
      return `the connection to source "${source}" broke while the request was being sent (${detail})`
    case 'awaiting':
      return `source "${source}" closed the connection after the request was sent, before answering (${detail})`
    case 'body': {
      if (reach.compressed?.end === 'missing')
        return `source "${source}" answered ${reach.status}, then its ${reach.compressed.encoding} body was cut: the compressed stream ended before its end (${detail})`
      if (reach.compressed?.end === 'unchecked')
        return `source "${source}" answered ${reach.status} with a ${reach.compressed.encoding} body that cannot be proven whole: a given fetch decompresses it without checking the end of the compressed stream, so a body cut short would read as complete`
      if (reach.unframed) return `source "${source}" answered ${reach.status}, then sent bytes its framing does not allow (more than its Content-Length declared, or a broken chunk), so where the answer ends is not known (${detail})`
      if (reach.undecodable !== null) return `source "${source}" answered ${reach.status} with a ${reach.undecodable} body that could not be decoded (${detail})`
      const of = reach.declared === null ? '' : ` of the ${reach.declared} its Content-Length declared`
      return `source "${source}" answered ${reach.status}, then its body was cut after ${reach.received} bytes${of} (${detail})`
    }
  }
}

/** The status an exchange answered, where one came: a body cut after its status and headers came has one. */
export function answeredStatus(result: UpstreamExchange): number | undefined {
  if (result.kind === 'response' || result.kind === 'too_large') return result.status
  return result.kind === 'network' && result.reach?.stage === 'body' ? result.reach.status : undefined
}

/**
 * A short quote of an upstream body for an error message, or ''. Free of the credential and of denied fields
 * (see deniedScrubber; `known` are the denied values of the record being written), scrubbed before it is cut.
 */
export function bodySnippet(ctx: HttpContext, body: string | null, known: readonly string[] = []): string {
  if (body === null) return ''
  const scrubbed = deniedScrubber(ctx, known).text(body)
  if (scrubbed === null) return '(body not quoted: it may hold a denied field\'s value)'
  const flat = ctx.redact.text(scrubbed).replace(/\s+/g, ' ').trim()
  return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat
}

/**
 * A 2xx answer that gives no JSON, saying what came: a body without text as declared (a charset Warrant does not
 * read), another content type (a proxy's `text/html` sign-in page), an empty body, or JSON that does not parse.
 * The body is not quoted: a 2xx body is the record's place, and one that does not parse cannot have its denied
 * fields found.
 */
export function notJsonMessage(source: string, result: Extract<UpstreamExchange, { kind: 'response' }>, parsed?: { readonly tooDeep?: true }): string {
  const { status, body } = result
  const start = `source "${source}" answered ${status}`
  if (body === null) return `${start} with a body that cannot be read as text: ${result.unreadable ?? 'it is not UTF-8'}`
  if (parsed?.tooDeep) return `${start} with JSON nested more than ${MAX_JSON_DEPTH} levels deep (${Buffer.byteLength(body)} bytes), which no record needs and Warrant does not read`
  if (body.trim() === '') return `${start} with an empty body, not JSON`
  const type = mediaTypeOf(result.headers.get('content-type'))
  const size = `${Buffer.byteLength(body)} bytes`
  if (type === null) return `${start} with a body that is not JSON (${size}, no Content-Type)`
  if (JSON_TYPE.test(type)) return `${start} with a body that is not JSON (${size}, Content-Type ${type})`
  if (type === 'text/html') return `${start} with an HTML page of ${size}, not JSON (a sign-in or error page of a proxy in front of it?)`
  return `${start} with a body of type ${type} (${size}), not JSON`
}

/** `application/json`, `application/problem+json`, `text/json` */
const JSON_TYPE = /^[\w.-]+\/([\w.-]+\+)?json$/

/** `source "x" answered 503: <snippet>`; `known` as for bodySnippet. */
export function statusMessage(ctx: HttpContext, source: string, status: number, body: string | null, what = 'answered', known: readonly string[] = []): string {
  const snippet = bodySnippet(ctx, body, known)
  return `source "${source}" ${what} ${status}${snippet ? `: ${snippet}` : ''}`
}

/**
 * A write's 429: the seconds its Retry-After asks for, or (none usable) the default marked `defaulted`, whose
 * message names no wait: the executor caps the default at `execution.max_retry_after_seconds` and says so.
 */
export function writeRateLimit(source: string, headers: Headers, now: number): { readonly retryAfterSeconds: number; readonly message: string; readonly defaulted?: true } {
  const parsed = parseRetryAfter(headers.get('retry-after'), now)
  return parsed === null
    ? { retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS, message: `source "${source}" is rate limiting (429) without a usable Retry-After`, defaulted: true }
    : { retryAfterSeconds: parsed, message: `source "${source}" is rate limiting (429); retry after ${parsed} s` }
}

/** A 429 answering a read: its message, and the seconds its `Retry-After` asks for where it names them. */
export interface RateLimit {
  readonly message: string
  readonly retryAfterSeconds?: number
}

/**
 * A read's 429, passed on to whoever reads again (an operation's re-read before a write): without the header,
 * the caller keeps its own pause rather than the write's long default.
 */
export function readRateLimit(source: string, headers: Headers, now: number): RateLimit {
  const seconds = retryAfterOf(headers, now)
  if (seconds === null) return { message: `source "${source}" is rate limiting (429) without a usable Retry-After` }
  return { message: `source "${source}" is rate limiting (429); retry after ${seconds} s`, retryAfterSeconds: seconds }
}

/** Statuses that say "not now" rather than "not this request": a timeout, too early, or a server-side failure. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 425 || (status >= 500 && status <= 599 && status !== 501 && status !== 505)
}

/**
 * The seconds a `Retry-After` header asks for, or null when there is none (the walk then backs off on its own).
 * `now`: the connector's clock (HttpContext.now), the one the gateway waits by, so an HTTP-date means the same
 * pause to both.
 */
export function retryAfterOf(headers: Headers, now: number): number | null {
  return parseRetryAfter(headers.get('retry-after'), now)
}

export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400
}
