import { bitValue } from './mysql-bits.js'

const TEMPORAL = new Set(['DATE', 'NEWDATE', 'DATETIME', 'DATETIME2', 'TIMESTAMP', 'TIMESTAMP2'])
/** 'YYYY-MM-DD', optionally ' HH:MM:SS' and a fraction, as the server sends a DATE, DATETIME or TIMESTAMP. */
const STORED = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(\.\d+)?)?$/

/**
 * mysql2's `typeCast`: BIT as the number its bits spell (`bitValue`), and for date and time columns each value as the UTC instant it names (the sessions run in UTC),
 * or, where it names none, the text as stored. The driver's own conversion builds a Date from the parts whatever
 * they are: MariaDB's zero date '0000-00-00' (kept without NO_ZERO_DATE, or under a non-strict sql_mode) came out
 * as 1899-11-30, '2024-00-10' as 2023-12-10, and a year below 100 in the 1900s: days no row holds, shown and
 * compared as if stored. As text they are shown as stored, and a timestamp field names them as not judged.
 */
export function mysqlTypeCast(field: { readonly type: string; string(): string | null; buffer(): Buffer | null }, next: () => unknown): unknown {
  if (field.type === 'BIT') {
    const bytes = field.buffer()
    return bytes === null ? null : bitValue(bytes)
  }
  if (!TEMPORAL.has(field.type)) return next()
  const text = field.string()
  if (text === null) return null
  return instantOfStored(text) ?? text
}

/** The instant a stored date or date-time names in UTC; null for a zero date, a zero month or day, an invalid day. */
export function instantOfStored(text: string): Date | null {
  const m = STORED.exec(text)
  if (m === null) return null
  const [, year, month, day, hours = '00', minutes = '00', seconds = '00', fraction = ''] = m
  // Date.UTC reads years 0 to 99 as 1900 to 1999: the year is set on its own
  const at = new Date(Date.UTC(2000, Number(month) - 1, Number(day), Number(hours), Number(minutes), Number(seconds), Math.floor(Number(`0${fraction || '.0'}`) * 1000)))
  at.setUTCFullYear(Number(year))
  // a part out of range (month 00, day 00, 30 February under ALLOW_INVALID_DATES) rolls over into another day
  if (at.getUTCFullYear() !== Number(year) || at.getUTCMonth() + 1 !== Number(month) || at.getUTCDate() !== Number(day)) return null
  return at
}
