import { decimalOf } from './decimal.js'
import { walkJsonText } from './json-text.js'

const NONE: ReadonlySet<number> = new Set()
/** A run of 16 digits and points: every literal with more significant digits than a double keeps has one. */
const LONG_RUN = /\d[\d.]{15}/
/** Strings (skipped, whatever they hold) and number literals of a JSON text, in order. */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g

/** The doubles `JSON.parse` made of literals of `text` it could not hold exactly. */
export function roundedNumbersOf(text: string): ReadonlySet<number> {
  if (!LONG_RUN.test(text)) return NONE
  let rounded: Set<number> | null = null
  for (const [token] of text.matchAll(TOKENS)) {
    if (token.charCodeAt(0) === 34 || token.length < 16) continue
    const n = Number(token)
    if (decimalOf(token) !== decimalOf(String(n))) (rounded ??= new Set()).add(n)
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
  if (text.length < 16 && !/[eE]/.test(text)) return true
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
  // most bodies hold no long run of digits and no exponent: nothing to walk
  if (!LONG_RUN.test(text) && !/\d[eE]/.test(text)) return null
  let found: RoundedLiteral | null = null
  walkJsonText(text, {
    number: (path, literal) => {
      if (!doubleHolds(literal)) found = { path, literal, read_as: String(Number(literal)) }
      return found !== null
    },
  })
  return found
}
