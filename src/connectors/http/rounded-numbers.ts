import { decimalOf } from '../../contract/index.js'

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
