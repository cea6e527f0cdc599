/**
 * What a receiver's answer (or its silence) means for a delivery: delivered, retried (and how soon), or failed for
 * good; and the one line the delivery's record, the plan page and the audit row say about it.
 */

/** One attempt's result. `final`: not retried whatever attempts are left. */
export interface AttemptResult {
  readonly ok: boolean
  readonly status: number | null
  readonly error: string | null
  readonly final?: true
  /** this gateway stopping cut the request short: not the receiver's doing */
  readonly stopped?: true
  /** what a 429 or 503 asked for in Retry-After: a wait, or the header when it could not be read */
  readonly retryAfter?: { readonly ms: number } | { readonly unreadable: string }
}

/**
 * The longest a Retry-After is honoured: the longest `max_backoff_ms` the config allows. A receiver asking for a day
 * gets its next attempt in an hour (and can ask again then), never a delivery parked for a day with no one told.
 */
export const RETRY_AFTER_MAX_MS = 3_600_000
const ERROR_TEXT_MAX = 300
const NOT_FOLLOWED = 'not followed: the signed body goes only to the configured URL'

/** Redirects the receiver says are permanent: the configured URL will keep answering so. */
const PERMANENT_REDIRECTS = new Set([301, 308])

/**
 * A receiver's HTTP answer. A redirect is never followed, whatever its kind: the body is signed for the receiver the
 * operator configured, and a redirect would carry it (and its signature) to a host nobody vetted (303 would turn it
 * into a GET besides). 301 and 308 say the URL has moved for good: each retry would be answered the same, so the
 * delivery fails at once, naming where the receiver points, for the operator to configure. 302, 303 and 307 say the
 * move is temporary (a maintenance page, a login wall in front of the receiver): the configured URL may answer
 * again, so they are retried there within `max_attempts`. The Location is named by its origin only: a webhook's path
 * can be its secret (Slack's), and the plan page shows the record to every reviewer.
 *
 * @example answerOf(response, 'https://hooks.example/warrant', Date.now())
 */
export function answerOf(response: Pick<Response, 'status' | 'headers'>, hookUrl: string, nowMs: number): AttemptResult {
  const { status } = response
  if (status >= 200 && status < 300) return { ok: true, status, error: null }
  const said = `the receiver answered HTTP ${status}`
  // 410 is the receiver saying the hook is gone for good (Slack's archived channel): retrying only repeats it.
  if (status === 410) return { ok: false, status, error: `${said} (gone: not retried)`, final: true }
  if (status >= 300 && status < 400) {
    const where = locationOf(response.headers.get('location'), hookUrl)
    if (PERMANENT_REDIRECTS.has(status)) return { ok: false, status, error: `${said}, a permanent redirect${where} (${NOT_FOLLOWED}; configure the new one; not retried)`, final: true }
    return { ok: false, status, error: `${said}, a temporary redirect${where} (${NOT_FOLLOWED})` }
  }
  if (status === 429 || status === 503) {
    const header = response.headers.get('retry-after')
    if (header !== null) return { ok: false, status, error: said, retryAfter: retryAfterOf(header, response.headers.get('date'), nowMs) }
  }
  return { ok: false, status, error: said }
}

/** ` to https://host/…`, or what stands for it. */
function locationOf(location: string | null, hookUrl: string): string {
  if (location === null || location.trim() === '') return ', naming no Location'
  if (!URL.canParse(location, hookUrl)) return ' to a Location that is not a URL'
  const target = new URL(location, hookUrl)
  // an origin never holds user:password@ nor the path; a scheme without one (mailto:) is named by its scheme alone
  return ` to ${target.origin === 'null' ? target.protocol : target.origin}/…`
}

/**
 * Retry-After (RFC 9110 §10.2.3): whole seconds, or an HTTP date. A date is read against the answer's own Date
 * header when it has one, so the receiver's clock and this one need not agree; else against `nowMs`.
 */
export function retryAfterOf(header: string, dateHeader: string | null, nowMs: number): { ms: number } | { unreadable: string } {
  const value = header.trim()
  if (/^\d{1,10}$/.test(value)) return { ms: Number(value) * 1000 }
  const at = Date.parse(value)
  // Date.parse reads far more than HTTP dates ("2"); an HTTP date names its weekday or month in letters
  if (Number.isNaN(at) || !/[a-z]{3}/i.test(value)) return { unreadable: value.slice(0, 40) }
  const sent = dateHeader === null ? Number.NaN : Date.parse(dateHeader)
  return { ms: Math.max(0, at - (Number.isNaN(sent) ? nowMs : sent)) }
}

/**
 * How long to wait before the next attempt, and what the record adds about it: the backoff, unless a 429 or 503 asked
 * for longer (honoured up to RETRY_AFTER_MAX_MS).
 */
export function nextWait(result: AttemptResult, backoffMs: number): { waitMs: number; note: string } {
  const asked = result.retryAfter
  if (!asked) return { waitMs: backoffMs, note: '' }
  if ('unreadable' in asked) return { waitMs: backoffMs, note: `; its Retry-After "${asked.unreadable}" is neither seconds nor an HTTP date: the backoff applies` }
  const askedFor = ` and asked to wait ${Math.ceil(asked.ms / 1000)} s (Retry-After)`
  if (asked.ms > RETRY_AFTER_MAX_MS) return { waitMs: RETRY_AFTER_MAX_MS, note: `${askedFor}; the next attempt waits the ${RETRY_AFTER_MAX_MS / 1000} s maximum` }
  if (asked.ms >= backoffMs) return { waitMs: asked.ms, note: `${askedFor}; the next attempt waits for it` }
  return { waitMs: backoffMs, note: `${askedFor}; the backoff's ${Math.ceil(backoffMs / 1000)} s is longer` }
}

/** Codes that say the request never left: nothing reached the receiver. */
const NOT_SENT = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|UND_ERR_CONNECT_TIMEOUT|ERR_TLS_.*|CERT_.*|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_.*)$/

/**
 * A request that got no answer. Only a connection that was never made means the receiver never had the delivery; a
 * timeout or a connection closed before the answer may have come after the receiver acted on it, and the record says
 * so (the retry carries the same delivery id for it to de-duplicate).
 */
export function unansweredOf(error: Error & { cause?: { code?: string; message?: string } }, timeoutMs: number): string {
  if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms (the receiver may have had the delivery)`
  const why = error.cause?.code ?? error.cause?.message ?? error.message
  const text = NOT_SENT.test(error.cause?.code ?? '') ? `could not reach the receiver: ${why}` : `the connection closed before the receiver answered (it may have had the delivery): ${why}`
  return text.slice(0, ERROR_TEXT_MAX)
}
