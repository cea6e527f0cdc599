import { WarrantError, hasLoneSurrogate } from '../contract/index.js'

/** One RFC 4180 line, CRLF-terminated. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`
}

/**
 * Text a spreadsheet would run as a formula (OWASP CSV injection): `=`, `+`, `-`, `@` at the start, also after
 * spaces (a reader that trims them would run it), and a tab or CR at the start. A negative number's own digits
 * (`-12.50`, `-9007199254740993` kept as text to stay exact) run nothing and stay as they are.
 */
const FORMULA = /^(?:\s*[=+@]|\s*-(?!\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$)|[\t\r])/

/**
 * One cell, so that a reader gets every value back exactly:
 * - null is an empty cell, empty text a quoted one (`""`), as PostgreSQL's `COPY … CSV` reads them;
 * - text a spreadsheet would run as a formula gets a `'` in front, and so does text that already starts with
 *   one: a cell starting with `'` had one added, and dropping it gives the value (a real `'=x` and an escaped
 *   `=x` no longer read the same);
 * - lists and objects are JSON;
 * - a cell with a comma, quote, line break, or space at either end is quoted, its quotes doubled.
 *
 * Text holding half a UTF-16 surrogate pair is refused: UTF-8 cannot carry it, and written as U+FFFD two such
 * values would read the same. The export's stream then fails, so the file is cut, never whole-looking (NDJSON
 * escapes such text and carries it).
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  let text: string
  if (typeof value === 'string') text = FORMULA.test(value) || value.startsWith("'") ? `'${value}` : value
  else if (typeof value === 'object') text = JSON.stringify(value)
  else text = String(value)
  if (hasLoneSurrogate(text))
    throw new WarrantError('conflict', `a value holds half a UTF-16 surrogate pair, which a CSV (UTF-8) cannot carry without changing it; export NDJSON, which escapes it`, { format: 'csv' })
  return text === '' || /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}
