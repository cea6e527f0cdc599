import { markIndistinct } from '../contract/index.js'

/**
 * A record's value as one terminal table cell. The table is what a person reads as the records: a value must
 * never look like another one (cut without a mark) nor draw lines of its own (a line break, a carriage return,
 * a bidirectional override that reorders what follows).
 */

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** `\u0430`, or `\u{1d41a}` past the BMP: a character as its code point. */
const escaped = (c: string) => {
  const code = c.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * The value as text on one line: null as `-`, lists comma-joined, objects as JSON, and what a reader could not
 * tell apart escaped by the review pages' one rule (`markIndistinct`): control and other unseen characters, a letter
 * of another script inside a word ("аdmin" with a Cyrillic "а" prints `\u0430dmin`), a character normalisation would
 * change (`cafe\u0301` beside `café`), and spaces at either end or in a run (` r002 ` prints `\u0020r002\u0020`).
 */
export function cellText(value: unknown): string {
  const text = value === null || value === undefined ? '-' : Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return markIndistinct(text, (c) => NAMED[c] ?? escaped(c))
}

/** The text in `width` columns: padded, or cut with a closing `…` so a cut value is never read as whole. */
export function fitted(text: string, width: number): string {
  return cut(text, width).padEnd(width)
}

/** The text as `fitted` draws it, unpadded; never splitting a character written as two UTF-16 units. */
function cut(text: string, width: number): string {
  if (text.length <= width) return text
  let end = Math.max(0, width - 1)
  if (end > 0 && /[\ud800-\udbff]/.test(text[end - 1]!)) end -= 1
  return `${text.slice(0, end)}…`
}

/** The widest a table column is drawn before its values are cut. */
const COLUMN_WIDTH = 28

/**
 * The width of a table column: its values' and header's, at most 28, but never so narrow that two different
 * values cut to the same cell ("sub_customer_northwind_2024…" for two ids that differ at their end would read as
 * one record listed twice). Such a column is widened just past the characters the two share.
 */
export function columnWidth(header: string, cells: readonly string[]): number {
  const natural = Math.max(header.length, ...cells.map((c) => c.length))
  let width = Math.min(COLUMN_WIDTH, natural)
  const distinct = [...new Set(cells)]
  for (let i = 0; i < distinct.length; i++)
    for (let j = i + 1; j < distinct.length; j++) {
      const a = distinct[i]!
      const b = distinct[j]!
      if (cut(a, width) !== cut(b, width)) continue
      let shared = 0
      while (shared < a.length && a[shared] === b[shared]) shared++
      // the first differing character and the closing mark (or the whole value, if shorter)
      width = Math.min(natural, Math.max(width, shared + 2))
    }
  return width
}
