import { decimalOf } from './decimal.js'
import { walkJsonText } from './json-text.js'

const NONE: ReadonlySet<number> = new Set()
/**
 * A literal a double may not hold: a run of 16 digits and points (every literal with more significant digits
 * than a double keeps has one), or an exponent of 3 or more digits ending the literal. Without either, a literal
 * has at most 15 significant digits and lies within 1e±114, inside a double's normal range, where a double holds
 * every such decimal; 1e400 (Infinity), 1e-400 (zero) and 1.23456789e-320 (a subnormal, fewer digits) have one.
 * The exponent must be followed by what may follow a number in JSON: hex in a string ("3e123f", a UUID's
 * "…3e123-…", a hash's "…3e123\"") would otherwise send most bodies with ids or hashes to the slow scan.
 */
const MAY_ROUND = /\d(?:[\d.]{15}|[eE][+-]?\d{3,}(?:[\s,\]}]|$))/
/** Strings (skipped, whatever they hold) and number literals of a JSON text, in order. */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g

/** The doubles `JSON.parse` made of literals of `text` it could not hold exactly. */
export function roundedNumbersOf(text: string): ReadonlySet<number> {
  if (!MAY_ROUND.test(text)) return NONE
  let rounded: Set<number> | null = null
  for (const [token] of text.matchAll(TOKENS)) {
    // a string, or a short literal without an exponent (see doubleHolds)
    if (token.charCodeAt(0) === 34 || doubleHolds(token)) continue
    // Infinity, or zero for a nonzero literal: a field holding zero in such a body may be that literal, and is
    // treated as rounded (the set compares 0 and -0 as one)
    (rounded ??= new Set()).add(Number(token))
  }
  return rounded ?? NONE
}

/** Whether a JSON value holds, anywhere inside it, one of the `rounded` numbers. */
export function holdsRounded(value: unknown, rounded: ReadonlySet<number>): boolean {
  if (rounded.size === 0) return false
  if (typeof value === 'number') return rounded.has(value)
  if (value === null || typeof value !== 'object') return false
  for (const inner of Array.isArray(value) ? value : Object.values(value)) if (holdsRounded(inner, rounded)) return true
  return false
}

/**
 * Whether the double `Number(text)` makes of a decimal text is the value written (a text that is not a plain
 * decimal, such as "0x10", is not judged here: true). `Number("9007199254740993")` is 9007199254740992: false.
 */
export function doubleHolds(text: string): boolean {
  // up to 15 characters and no exponent: at most 15 significant digits, within range, always exact
  if (text.length < 16 && text.indexOf('e') === -1 && text.indexOf('E') === -1) return true
  const written = decimalOf(text)
  return written === null || written === decimalOf(String(Number(text)))
}

/** A number literal `JSON.parse` reads as another value: its path, its text, and the value it becomes. */
export interface RoundedLiteral {
  readonly path: string
  readonly literal: string
  readonly read_as: string
}

/**
 * The first number literal of a JSON text that `JSON.parse` does not read as the value written, or null: an
 * integer past 2^53 (9007199254740993 becomes …992), more significant digits than a double keeps, or an exponent
 * out of a double's range (1e400 becomes Infinity, 1e-400 zero). A request holding one would be acted on with a
 * value nobody sent, so every surface refuses it. Expects text `JSON.parse` accepts.
 *
 * @example roundedLiteralOf('{"a":[9007199254740993]}') // { path: 'a.0', literal: '9007199254740993', read_as: '9007199254740992' }
 */
export function roundedLiteralOf(text: string): RoundedLiteral | null {
  // most bodies hold no long run of digits and no 3-digit exponent: nothing to walk
  if (!MAY_ROUND.test(text)) return null
  let found: RoundedLiteral | null = null
  walkJsonText(text, {
    number: (path, literal) => {
      if (!doubleHolds(literal)) found = { path, literal, read_as: String(Number(literal)) }
      return found !== null
    },
  })
  return found
}
