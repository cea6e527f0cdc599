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
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width)
}
