import { escapedUnspoofable } from '../contract/index.js'

/**
 * A record's value as one terminal table cell. The table is what a person reads as the records: a value must
 * never look like another one (cut without a mark) nor draw lines of its own (a line break, a carriage return,
 * a bidirectional override that reorders what follows).
 */

/**
 * The value as text on one line: null as `-`, lists comma-joined, objects as JSON, and what a reader could not
 * tell apart escaped by the review pages' one rule in the terminal's syntax (`escapedUnspoofable`): control and other
 * unseen characters (ESC too, so no terminal sequence is written raw), a letter
 * of another script inside a word ("аdmin" with a Cyrillic "а" prints `\u0430dmin`), a character normalisation would
 * change (`cafe\u0301` beside `café`), spaces at either end or in a run (` r002 ` prints `\u0020r002\u0020`), and a
 * backslash that opens what reads as an escape (the text `zz\u200b` prints `zz\u005cu200b`, never as "zz" plus U+200B).
 */
export function cellText(value: unknown): string {
  const text = value === null || value === undefined ? '-' : Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return escapedUnspoofable(text)
}

/**
 * Characters a terminal draws two columns wide (East Asian wide and fullwidth forms, emoji). Measured in UTF-16
 * units instead, a CJK name took twice its width and every later cell of its row moved right, under another header.
 */
const WIDE =
  /[\u{1100}-\u{115f}\u{2e80}-\u{303e}\u{3041}-\u{33ff}\u{3400}-\u{4dbf}\u{4e00}-\u{9fff}\u{a000}-\u{a4cf}\u{a960}-\u{a97f}\u{ac00}-\u{d7a3}\u{f900}-\u{faff}\u{fe10}-\u{fe19}\u{fe30}-\u{fe6f}\u{ff00}-\u{ff60}\u{ffe0}-\u{ffe6}\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u

/** The terminal columns a character takes. */
const columnsOf = (c: string) => (WIDE.test(c) ? 2 : 1)

/** The terminal columns a text takes. */
export function textColumns(text: string): number {
  let n = 0
  for (const c of text) n += columnsOf(c)
  return n
}

/** The text padded with spaces to `width` terminal columns, never cut (a name, an id). */
export function padded(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - textColumns(text)))
}

/** The text in `width` columns: padded, or cut with a closing `…` so a cut value is never read as whole. */
export function fitted(text: string, width: number): string {
  return padded(cut(text, width), width)
}

/** The text as `fitted` draws it, unpadded: whole characters in at most `width` columns, the last one the mark. */
function cut(text: string, width: number): string {
  if (textColumns(text) <= width) return text
  let shown = ''
  let used = 0
  for (const c of text) {
    if (used + columnsOf(c) > width - 1) break
    shown += c
    used += columnsOf(c)
  }
  return `${shown}…`
}

/** The widest a table column is drawn before its values are cut, in terminal columns. */
const COLUMN_WIDTH = 28

/**
 * The width of a table column in terminal columns: its values' and header's, at most 28, but never so narrow that
 * two different values cut to the same cell ("sub_customer_northwind_2024…" for two ids that differ at their end
 * would read as one record listed twice). Such a column is widened just past the characters the two share.
 */
export function columnWidth(header: string, cells: readonly string[]): number {
  const natural = Math.max(textColumns(header), ...cells.map(textColumns))
  let width = Math.min(COLUMN_WIDTH, natural)
  const distinct = [...new Set(cells)]
  for (let i = 0; i < distinct.length; i++)
    for (let j = i + 1; j < distinct.length; j++) {
      const a = [...distinct[i]!]
      const b = [...distinct[j]!]
      if (cut(distinct[i]!, width) !== cut(distinct[j]!, width)) continue
      let shared = 0
      while (shared < a.length && a[shared] === b[shared]) shared++
      // the shared characters, the first that differs (two columns at most) and the closing mark
      width = Math.min(natural, Math.max(width, textColumns(a.slice(0, shared).join('')) + 3))
    }
  return width
}
