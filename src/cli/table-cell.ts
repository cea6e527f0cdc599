/**
 * A record's value as one terminal table cell. The table is what a person reads as the records: a value must
 * never look like another one (cut without a mark) nor draw lines of its own (a line break, a carriage return,
 * a bidirectional override that reorders what follows).
 */

/** Control, line-separator and bidirectional-override characters: shown escaped, never interpreted. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** The value as text on one line: null as `-`, lists comma-joined, objects as JSON, control characters escaped. */
export function cellText(value: unknown): string {
  const text = value === null || value === undefined ? '-' : Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return text.replace(UNPRINTABLE, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** The text in `width` columns: padded, or cut with a closing `…` so a cut value is never read as whole. */
export function fitted(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width)
}
