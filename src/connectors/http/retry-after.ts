/** What a 429 without a usable `Retry-After` is taken to ask for (an operation's write: at most its max_retry_after_seconds). */
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
  const at = parseHttpDate(text, now)
  if (at === null) return null
  return Math.max(0, Math.ceil((at - now) / 1000))
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)'
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)'
const MONTH = `(${MONTHS.join('|')})`
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})'
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i')
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i')
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`, 'i')

/**
 * The instant of an HTTP-date in one of its three forms (RFC 9110 §5.6.7), or null. Never Date.parse: it reads
 * nearly any text holding a number as a date (`soon 5` is May 2001, `x 2030` January 2030), so an upstream's
 * unusable header became a pause it never asked for.
 */
function parseHttpDate(text: string, now: number): number | null {
  let m = IMF_FIXDATE.exec(text)
  if (m) return instant(Number(m[3]), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!)
  m = RFC_850.exec(text)
  if (m) {
    // a two-digit year more than 50 years ahead is the most recent past year with those digits (§5.6.7)
    let year = 2000 + Number(m[3])
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100
    return instant(year, m[2]!, m[1]!, m[4]!, m[5]!, m[6]!)
  }
  m = ASCTIME.exec(text)
  if (m) return instant(Number(m[6]), m[1]!, m[2]!.trim(), m[3]!, m[4]!, m[5]!)
  return null
}

/** The UTC instant of these fields, or null when one is out of range (31 February, 25:00). */
function instant(year: number, month: string, day: string, hour: string, minute: string, second: string): number | null {
  const index = MONTHS.indexOf(month.toLowerCase())
  const [d, h, min, s] = [day, hour, minute, second].map(Number) as [number, number, number, number]
  if (h > 23 || min > 59 || s > 60) return null
  const at = new Date(Date.UTC(year, index, d, h, min, Math.min(s, 59)))
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== index || at.getUTCDate() !== d) return null
  return at.getTime()
}
