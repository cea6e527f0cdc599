/** What a 429 without a usable `Retry-After` is taken to ask for. */
export const DEFAULT_RETRY_AFTER_SECONDS = 60

/**
 * Seconds to wait from a `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * A date in the past gives 0; a missing or unreadable header gives null.
 *
 * @example parseRetryAfter('120') // 120
 * @example parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')) // 60
 */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | null {
  if (header === null) return null
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text)
  if (!/[a-z]/i.test(text)) return null
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  return Math.max(0, Math.ceil((at - now) / 1000))
}
