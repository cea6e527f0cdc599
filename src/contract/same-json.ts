import { hasLoneSurrogate } from './canonical.js'

/**
 * A cheap test that two values have the same canonical JSON, for the hot paths that group values by
 * `canonicalJson` (a window's targets by the change each sets). True only when `canonicalJson(a)` and
 * `canonicalJson(b)` are the same text (or both refuse the same way); false says nothing, and the caller then
 * compares canonically. So two values that differ never pass, and a caller keyed by canonical text keeps exactly
 * the groups it had.
 *
 * Same when identical; plain objects with the same own keys whose values are surely the same; arrays likewise.
 * Anything else (a Date, a toJSON, NaN, a value nested past 32 levels) is left to the canonical comparison.
 *
 * @example surelySameJson({ a: 1, b: ['x'] }, { b: ['x'], a: 1 }) // true
 */
export function surelySameJson(a: unknown, b: unknown): boolean {
  return same(a, b, 0, false)
}

/**
 * As `surelySameJson`, and both are JSON data canonicalJson writes without refusing: plain objects and arrays of
 * well-formed strings, finite numbers, booleans and null (an undefined member is left out, as there). True only when
 * `canonicalJson(a) === canonicalJson(b)` and neither throws; false says nothing.
 *
 * @example surelySameData({ a: [1, 'x'] }, { a: [1, 'x'] }) // true; surelySameData(Infinity, Infinity) // false
 */
export function surelySameData(a: unknown, b: unknown): boolean {
  return same(a, b, 0, true)
}

function same(a: unknown, b: unknown, depth: number, data: boolean): boolean {
  if (a === b && (!data || a === null || typeof a === 'boolean' || (typeof a === 'number' && Number.isFinite(a)) || (typeof a === 'string' && !hasLoneSurrogate(a))))
    return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || depth >= MAX_DEPTH) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length || !plain(a, Array.prototype) || !plain(b, Array.prototype)) return false
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i], depth + 1, data)) return false
    return true
  }
  if (Array.isArray(b) || !plainObject(a) || !plainObject(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    if (data && hasLoneSurrogate(key)) return false
    if (!Object.hasOwn(b, key)) return false
    const av = (a as Record<string, unknown>)[key]
    const bv = (b as Record<string, unknown>)[key]
    // an undefined member is left out of canonical JSON
    if (!(av === undefined && bv === undefined) && !same(av, bv, depth + 1, data)) return false
  }
  return true
}

const MAX_DEPTH = 32

function plainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown
  return (prototype === Object.prototype || prototype === null) && plain(value, prototype)
}

/** No toJSON of its own or inherited: canonical JSON serialises it by its members. */
function plain(value: object, prototype: unknown): boolean {
  return Object.getPrototypeOf(value) === prototype && typeof (value as { toJSON?: unknown }).toJSON !== 'function'
}
