import type { MiddlewareHandler } from 'hono'
import { duplicateKeyOf, WarrantError } from '../contract/index.js'
import { roundedNumberIn } from './exact-numbers.js'

/**
 * Refuses a JSON body that names one key twice (`{"status": "a", "status": "b"}`): a JSON parser keeps the
 * last, so the request would silently ask another question than the one written. Malformed JSON is left to the
 * route, which refuses it with its own message. A query parameter given twice (`?outcome=failed&outcome=skipped`)
 * is refused for the same reason: no /v1 parameter takes a list, and the route's schema would answer about a type.
 * A number JSON would round (9007199254740993 read as …992) is refused too: see {@link roundedNumberIn}.
 */
export const refuseDuplicateKeys: MiddlewareHandler = async (c, next) => {
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (values.length > 1)
      throw new WarrantError('invalid_request', `query parameter "${name}" is given ${values.length} times; give it once (no parameter here takes a list)`, { field: name, count: values.length })
  }
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && /json/i.test(c.req.header('content-type') ?? '')) {
    const text = await c.req.text()
    const refusal = unfaithfulJsonIn(text)
    if (refusal) throw refusal
  }
  await next()
}

/**
 * The refusal for a JSON text that `JSON.parse` would turn into another request than the one written (a key
 * named twice, a number a double does not hold), or null. Every surface taking JSON asks it before parsing.
 */
export function unfaithfulJsonIn(text: string): WarrantError | null {
  return duplicateKeyIn(text) ?? roundedNumberIn(text)
}

/** The refusal for a JSON text naming a key twice, or null (also null for text that is not JSON). */
export function duplicateKeyIn(text: string): WarrantError | null {
  try {
    JSON.parse(text)
  } catch {
    return null
  }
  const found = duplicateKeyOf(text)
  if (!found) return null
  const where = found.path ? `"${found.path}"` : 'the top level'
  return new WarrantError(
    'invalid_request',
    `invalid request body: key "${found.key}" appears twice in ${where}; JSON keeps only the last, so it is refused. Give one condition per field and combine operators in it, e.g. {"amount_due": {"gte": 10, "lt": 100}}, or list values with {"in": [...]}`,
    { path: found.path, key: found.key },
  )
}
