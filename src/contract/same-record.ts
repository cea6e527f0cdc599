import { canonicalJson } from './canonical.js'
import { sameAsDeclared } from './filter.js'
import { surelySameData } from './same-json.js'

/**
 * How a record read again is judged the same as a record read before (the executor's revalidation and effect
 * checks, and `warrant check`'s read by id): the same rule everywhere, so a check never calls broken what an
 * operation accepts, nor the reverse.
 */

/** Equal as JSON values, whatever their key order. */
export function sameValue(a: unknown, b: unknown): boolean {
  // two copies of the same JSON data (a field read before and after a write) need no serialising
  if (a === b || surelySameData(a ?? null, b ?? null)) return true
  try {
    return canonicalJson(a ?? null) === canonicalJson(b ?? null)
  } catch {
    return false
  }
}

/**
 * One field's value read twice is the same as its field is declared (`type`): the same JSON, or (`sameAsDeclared`)
 * a timestamp the same instant in another spelling, a number the same value.
 */
export function sameFieldValue(a: unknown, b: unknown, type: string | undefined): boolean {
  return sameValue(a, b) || sameAsDeclared(a, b, type)
}

/**
 * Versions compare as text; timestamps also as instants (a driver may render the same instant differently); entity
 * tags by their opaque tag, weak or not (`W/"v1"` is `"v1"`: RFC 9110's weak comparison), since a proxy weakens the
 * tag of the answers it compresses (nginx does), so a tag seen only weakened has not moved.
 */
export function sameVersion(stored: string, expected: string): boolean {
  if (stored === expected) return true
  const tag = opaqueTag(stored)
  if (tag !== undefined && tag === opaqueTag(expected)) return true
  const iso = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/
  if (!iso.test(stored) || !iso.test(expected)) return false
  const a = Date.parse(stored)
  return !Number.isNaN(a) && a === Date.parse(expected)
}

/** The opaque tag of an entity tag (`"v1"` of `W/"v1"` or of `"v1"`), or undefined for a version of another form. */
function opaqueTag(version: string): string | undefined {
  return /^(?:W\/)?("[^"]*")$/.exec(version)?.[1]
}
