import { z } from 'zod'

/**
 * A whole number given as a URL query parameter, written as decimal digits and nothing else. `z.coerce.number()`
 * reads the text through `Number()`, which takes `0x10` as 16, `1e2` as 100, ` 5 ` as 5 and `0b11` as 3: a
 * parameter the caller wrote one way would be used as another, with no word. Those are refused, naming the form.
 *
 * @example
 * z.strictObject({ limit: queryInteger({ min: 1, max: 1000 }).default(100) })
 */
export function queryInteger(bounds: { readonly min: number; readonly max: number }) {
  return z
    .string()
    .regex(/^(0|[1-9][0-9]{0,14})$/, { error: `a whole number written in decimal digits, ${bounds.min}..${bounds.max}` })
    .transform(Number)
    .pipe(z.number().int().min(bounds.min).max(bounds.max))
}
