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
}

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
 * @example answerOf(response, 'https://hooks.example/warrant')
 */
export function answerOf(response: Pick<Response, 'status' | 'headers'>, hookUrl: string): AttemptResult {
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
