/** PostgreSQL's `timestamp with time zone` type oid. */
export const TIMESTAMPTZ = 1184

/** A timestamptz as PostgreSQL spells it in UTC under DateStyle ISO: "2025-01-05 12:34:56.789123+00". */
const UTC_STAMP = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d{1,6})?\+00$/

/**
 * A timestamptz spelled in UTC, read straight to the ISO text its record shows: exactly what pg's parser
 * (postgres-date) and then `Date.prototype.toISOString` make of it, without the Date. pg made one per value, with
 * a regular expression's match, only for `normaliseValue` to turn it back into this text: a tenth of a walk's
 * work. The fraction is cut to milliseconds as the Date cuts it (`1000 * parseFloat(".789123")`, truncated by
 * `Date.UTC`). Any other spelling (another time zone, BC, a year of five digits, infinity, another DateStyle)
 * goes to pg's own parser, as before.
 *
 * @example utcInstantText('2025-01-05 12:34:56.7891+00', parse) // '2025-01-05T12:34:56.789Z'
 */
export function utcInstantText(value: string, otherwise: (value: string) => unknown): unknown {
  const match = UTC_STAMP.exec(value)
  if (match === null) return otherwise(value)
  const ms = match[3] === undefined ? 0 : Math.trunc(1000 * parseFloat(match[3]))
  return `${match[1]}T${match[2]}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`
}

/** PostgreSQL's `timestamp` (without time zone) and `date` type oids. */
export const TIMESTAMP = 1114
export const DATE = 1082

/** A `timestamp` or `date` as PostgreSQL spells it under DateStyle ISO: "2025-01-05 12:34:56.789", "2025-01-05", " BC" after either. */
const WALL_CLOCK = /^(\d{4,}-\d\d-\d\d)(?: (\d\d:\d\d:\d\d(?:\.\d{1,6})?))?( BC)?$/

/**
 * A `timestamp` or `date` (no zone) read as the instant it names in UTC, as a SQLite text time and a MySQL DATETIME
 * are read, and as the SQL compares a filter's instant with it (PostgreSQL drops the ISO parameter's zone). pg's own
 * parser read it in the gateway process's time zone: under TZ=Europe/Berlin a row holding 12:00 was shown as 10:00Z,
 * while a filter `< 11:00Z` left it out. Infinity and any other spelling go to pg's parser as before.
 *
 * @example utcWallClock('2025-01-05 12:34:56.789', parse) // '2025-01-05T12:34:56.789Z'
 */
export function utcWallClock(value: string, otherwise: (value: string) => unknown): unknown {
  const match = WALL_CLOCK.exec(value)
  if (match === null) return otherwise(value)
  return utcInstantText(`${match[1]} ${match[2] ?? '00:00:00'}+00${match[3] ?? ''}`, otherwise)
}
