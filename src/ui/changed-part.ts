import type { FieldType } from '../config/index.js'
import { sharedEnds } from '../contract/index.js'
import { scalarText } from './format.js'

/** Characters past which a value may wrap anywhere (see `.long` in the stylesheet), and its change is marked. */
export const LONG_VALUE = 40

/** A value as shown, cut where it differs from the other side of its change: `head + changed + tail` is the whole. */
export interface ShownParts {
  readonly head: string
  readonly changed: string
  readonly tail: string
}

/**
 * A code point spelled by `revealed` ("[U+0435]"), or, in text shown quoted, one of JSON's escapes ("\\\"", "\\\\"):
 * each is one unit, so a mark never starts or ends inside one.
 */
const ESCAPE = /\[U\+[0-9A-F]{4,6}\]/g
const ESCAPE_QUOTED = /\[U\+[0-9A-F]{4,6}\]|\\u[0-9a-f]{4}|\\./g
/** The quoted form `scalarText` gives text that would read as something else. */
const QUOTED = /^".*" \(text\)$/s

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' })

/** The shown text in the units a reader sees as one: escapes whole, and every other run in graphemes (a flag, a family emoji, a letter and its accent). */
function readingUnits(shown: string): string[] {
  const units: string[] = []
  const escape = QUOTED.test(shown) ? ESCAPE_QUOTED : ESCAPE
  let at = 0
  for (const m of shown.matchAll(escape)) {
    for (const g of graphemes.segment(shown.slice(at, m.index))) units.push(g.segment)
    units.push(m[0])
    at = m.index + m[0].length
  }
  for (const g of graphemes.segment(shown.slice(at))) units.push(g.segment)
  return units
}

/**
 * Where a text's before and after differ, as each side is shown: the part between what their starts and ends share
 * (`sharedEnds`, as look-alike ids are compared), found on the shown text so a revealed escape or a quote's escape is
 * marked whole or not at all. Only for text past `LONG_VALUE` on one side: two 2,000-character configs that differ
 * in one letter near the end read as the same to the eye, and nothing said which letter. Null where nothing would
 * be gained: a value of another kind, a short one (read whole at a glance), equal ones, or no shared start or end
 * (the whole value changed, and the mark would cover it all).
 */
export function changedParts(before: unknown, after: unknown, type?: FieldType): readonly [ShownParts, ShownParts] | null {
  if (typeof before !== 'string' || typeof after !== 'string' || before === '' || after === '') return null
  const shown = [scalarText(before, type), scalarText(after, type)] as const
  if (shown[0] === shown[1] || Math.max(shown[0].length, shown[1].length) <= LONG_VALUE) return null
  const units = shown.map(readingUnits)
  const { head, tail } = sharedEnds(units)
  if (head + tail === 0) return null
  const [was, becomes] = units.map((u) => ({ head: u.slice(0, head).join(''), changed: u.slice(head, u.length - tail).join(''), tail: u.slice(u.length - tail).join('') }))
  return [was!, becomes!]
}
