import { markMixedScript } from '../contract/index.js'

/**
 * A record's value as one terminal table cell. The table is what a person reads as the records: a value must
 * never look like another one (cut without a mark) nor draw lines of its own (a line break, a carriage return,
 * a bidirectional override that reorders what follows).
 */

/**
 * Control, line-separator, bidirectional and other format characters (zero-width spaces and joiners, the BOM):
 * shown escaped, never interpreted; "legal_hold" plus a zero-width space is another value that reads the same.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** `\u0430`, or `\u{1d41a}` past the BMP: a character as its code point. */
const escaped = (c: string) => {
  const code = c.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * The value as text on one line: null as `-`, lists comma-joined, objects as JSON, control characters escaped,
 * and a letter of another script inside a word too ("аdmin" with a Cyrillic "а" prints `\u0430dmin`), as the
 * review pages mark it.
 */
export function cellText(value: unknown): string {
  const text = value === null || value === undefined ? '-' : Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return markMixedScript(text, escaped).replace(UNPRINTABLE, (c) => NAMED[c] ?? escaped(c))
}

/** The text in `width` columns: padded, or cut with a closing `…` so a cut value is never read as whole. */
export function fitted(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width)
}
