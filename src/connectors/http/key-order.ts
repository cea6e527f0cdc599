import type { FieldType } from '../../config/schema.js'
import { instantOf } from '../../contract/index.js'

/** A keyset start key or a page's key: a string or finite number, null where the item has none usable. */
export type Key = string | number | null

/**
 * Negative, zero or positive as key `a` comes before, with or after `b` in the keyset field's order as its declared
 * type gives it: a timestamp by the instant it names ("…T10:00:00+02:00" before "…T09:00:00Z"), a number by value
 * (9 before 10), any other string by UTF-16 code unit. Null where the two cannot be compared: a string and a number,
 * a timestamp that names no instant, two spellings of one instant (finer than a millisecond, they may differ).
 */
export function compareKeys(a: string | number, b: string | number, type: FieldType | undefined): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a !== 'string' || typeof b !== 'string') return null
  if (a === b) return 0
  if (type !== 'timestamp') return a < b ? -1 : 1
  const [x, y] = [instantOf(a), instantOf(b)]
  return x === null || y === null || x === y ? null : x - y
}

/**
 * How a keyset page's keys stand, from the start key it was asked after: `rising` (each after the one before, the
 * first after the start key), `falls` (the first key before the one before it: `index` into the page, `previous`
 * the key it should follow), or `unknown` (a key missing, not comparable, or equal to the one before, and none
 * falls). An equal key is a repeat, not an order: an id read twice, or a field records share, which the walk's
 * repeated ids and `sharedKey` name as such.
 */
export type KeyOrder = { readonly kind: 'rising' | 'unknown' } | { readonly kind: 'falls'; readonly index: number; readonly key: string | number; readonly previous: string | number }

export function keyOrderOf(start: Key, keys: readonly Key[], type: FieldType | undefined): KeyOrder {
  let previous = start
  let unknown = false
  for (const [index, key] of keys.entries()) {
    if (key === null) {
      unknown = true
      continue
    }
    const order = previous === null ? 1 : compareKeys(key, previous, type)
    if (order === null || order === 0) unknown = true
    else if (order < 0) return { kind: 'falls', index, key, previous: previous! }
    previous = key
  }
  return { kind: unknown ? 'unknown' : 'rising' }
}
