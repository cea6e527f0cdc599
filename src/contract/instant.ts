/**
 * ISO-8601 dates and date-times: `YYYY-MM-DD`, then `T` (or a space, as SQLite writes them) `HH:MM[:SS[.fraction]]`
 * and a zone: `Z`, `±HH:MM`, `±HHMM` or `±HH` (PostgreSQL's own spelling of a whole-hour offset, `…11:00:00+00`).
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/

/**
 * The instant an ISO-8601 timestamp names, in milliseconds since the epoch (fractions past the millisecond
 * dropped), or null for anything else. A date alone is its midnight UTC; a date-time without a zone is UTC,
 * as SQLite's date functions write and read them (`strict` refuses it instead: in a filter it is ambiguous).
 * Timestamps are compared by instant, never as text: "2024-06-01 13:00:00" is after "2024-06-01T12:00:00Z"
 * though it sorts before it, and "…:00.5Z" after "…:00Z" though "." sorts before "Z".
 *
 * @example instantOf('2024-06-01T12:00:00+02:00') === Date.UTC(2024, 5, 1, 10)
 */
export function instantOf(value: unknown, strict = false): number | null {
  if (typeof value !== 'string') return null
  const m = ISO.exec(value)
  if (m === null) return null
  const [, y, mo, d, h, mi, s, fraction, zone] = m
  if (strict && h !== undefined && zone === undefined) return null
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h ?? 0)
  const minute = Number(mi ?? 0)
  const second = Number(s ?? 0)
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, Number((fraction ?? '').padEnd(3, '0').slice(0, 3)))
  // a day the month does not have (31 April) rolls over into the next: no date
  if (date.getUTCDate() !== day) return null
  const at = date.getTime()
  return at - offsetMinutes(zone) * 60_000
}

/** Positions of the digits in toISOString's spelling, `YYYY-MM-DDTHH:MM:SS.sssZ`. */
const DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22]
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * Whether a value names an instant (`instantOf(value, strict)` is not null), answered without building a date for
 * toISOString's own spelling, which is how nearly every stored timestamp arrives: a walk asks it of every record.
 * (That spelling carries its `Z`, so the fast path answers the strict question too.)
 */
export function namesInstant(value: unknown, strict = false): boolean {
  if (typeof value !== 'string') return false
  if (value.length !== 24 || value.charCodeAt(10) !== 84 || value.charCodeAt(23) !== 90) return instantOf(value, strict) !== null
  if (value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45 || value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58 || value.charCodeAt(19) !== 46) return false
  for (const i of DIGITS) {
    const c = value.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  const year = twoDigits(value, 0) * 100 + twoDigits(value, 2)
  const month = twoDigits(value, 5)
  const day = twoDigits(value, 8)
  if (month < 1 || month > 12 || day < 1 || twoDigits(value, 11) > 23 || twoDigits(value, 14) > 59 || twoDigits(value, 17) > 59) return false
  if (month === 2 && day === 29) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= DAYS_IN_MONTH[month - 1]!
}

/** The number two digits at `i` spell (a closure here would be made, and named, per call). */
function twoDigits(text: string, i: number): number {
  return (text.charCodeAt(i) - 48) * 10 + text.charCodeAt(i + 1) - 48
}

function offsetMinutes(zone: string | undefined): number {
  if (zone === undefined || zone === 'Z') return 0
  const digits = zone.replace(':', '')
  const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))
  return zone.startsWith('-') ? -minutes : minutes
}

/** The one spelling of an instant that orders as text the way instants do: `toISOString`. */
export function canonicalInstant(value: string): string | null {
  const at = instantOf(value)
  return at === null ? null : new Date(at).toISOString()
}
