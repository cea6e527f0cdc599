import { WarrantError } from '../contract/index.js'

/** For repeatable options (`--filter a --filter b`): every value, in order. */
export const collect = (value: string, previous: readonly string[]): string[] => [...previous, value]

/**
 * A whole number above 0, or an `invalid_request` naming the option: bad input exits 2 with a sentence, never
 * a stack trace.
 */
export const positiveInteger =
  (name: string) =>
  (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1) throw new WarrantError('invalid_request', `${name} must be a whole number above 0, not "${value}"`)
    return n
  }
