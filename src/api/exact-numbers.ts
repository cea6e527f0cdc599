import { WarrantError, roundedLiteralOf } from '../contract/index.js'

/**
 * The refusal for a JSON text holding a number `JSON.parse` would read as another value, or null (also null for
 * text that is not JSON). A `number` parameter sent as 9007199254740993 would otherwise be proposed, reviewed and
 * written as 9007199254740992, and a filter bound 1e400 would become Infinity: a request nobody sent.
 */
export function roundedNumberIn(text: string): WarrantError | null {
  try {
    JSON.parse(text)
  } catch {
    return null
  }
  const found = roundedLiteralOf(text)
  if (!found) return null
  return new WarrantError(
    'invalid_request',
    `invalid request body: the number ${found.literal} at "${found.path}" is not one a JSON number (a double) holds exactly; it would be read as ${found.read_as}, so it is refused. Send a number of at most 15 significant digits (integers within ±9007199254740991), or a string where the field takes text`,
    { ...found },
  )
}
