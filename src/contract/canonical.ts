import { createHash } from 'node:crypto'
import canonicalize from 'canonicalize'

/**
 * RFC 8785 canonical JSON: the same value always serialises to the same bytes, whatever its key order.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  const flat = flatCanonical(value)
  if (flat !== null) return flat
  rejectFunctions(value, new Set())
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError('value cannot be represented as canonical JSON')
  return text
}

/**
 * RFC 8785 of a plain object whose values are all strings, finite numbers, booleans or null (an audit row, a call's
 * summary): its keys sorted by UTF-16 code units and each member as JSON.stringify writes it, which is what the
 * library answers, without its recursion. Null for anything else (the library then decides, throwing where it
 * throws: a lone surrogate, a number that is not finite).
 */
function flatCanonical(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null
  const prototype = Object.getPrototypeOf(value) as unknown
  if (prototype !== Object.prototype && prototype !== null) return null
  const record = value as Record<string, unknown>
  if (typeof record.toJSON === 'function') return null
  let out = ''
  for (const key of Object.keys(record).sort()) {
    const member = record[key]
    if (member === undefined) continue
    if (typeof member === 'string') {
      if (hasLoneSurrogate(member)) return null
    } else if (typeof member === 'number') {
      if (!Number.isFinite(member)) return null
    } else if (member !== null && typeof member !== 'boolean') return null
    if (hasLoneSurrogate(key)) return null
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(member)}`
  }
  return `{${out}}`
}

/**
 * The `canonicalize` library serialises a function nested in an object as the bare word `undefined` (invalid
 * JSON) and drops one nested in an array (`[fn]` → `[]`, the digest of an empty list). A function is never
 * data: refuse it, as JSON has no spelling for it.
 */
function rejectFunctions(value: unknown, seen: Set<object>): void {
  if (typeof value === 'function') throw new TypeError('value cannot be represented as canonical JSON: it holds a function')
  if (value === null || typeof value !== 'object' || seen.has(value)) return
  seen.add(value)
  const target = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value
  if (target !== value) rejectFunctions(target, seen)
  else if (Array.isArray(value)) for (const v of value) rejectFunctions(v, seen)
  else for (const v of Object.values(value)) rejectFunctions(v, seen)
  seen.delete(value)
}

/**
 * `sha256:` digest of the canonical JSON of a value.
 *
 * @example digestOf([{ id: 'sub_1', version: '3' }]) // 'sha256:…'
 */
export function digestOf(value: unknown): string {
  return sha256(canonicalJson(value))
}

/** `sha256:` digest of text, as lowercase hex. */
export function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`
}

/**
 * An incremental digest for lists too long to hold in memory (a selection of millions of members). It hashes
 * the canonical JSON array `[m1,m2,…]` piece by piece, so the result equals `digestOf([m1, m2, …])`.
 */
export function createListDigest(): { add(member: unknown): void; finish(): string } {
  const hash = createHash('sha256')
  let first = true
  // Members are hashed in chunks: one update per member would cost more than the hashing itself.
  let pending = '['
  return {
    add(member) {
      const text = idVersionJson(member) ?? canonicalJson(member)
      pending += first ? text : `,${text}`
      first = false
      if (pending.length >= DIGEST_CHUNK) {
        hash.update(pending)
        pending = ''
      }
    },
    finish() {
      hash.update(`${pending}]`)
      return `sha256:${hash.digest('hex')}`
    },
  }
}

const DIGEST_CHUNK = 64 * 1024

/**
 * The canonical JSON of a selection's digest entry `{ id, version }` (string id, string or null version),
 * written directly: keys in code-point order, strings as JSON.stringify writes them, which is what RFC 8785
 * prescribes. Anything else is left to `canonicalJson`.
 */
function idVersionJson(member: unknown): string | undefined {
  if (member === null || typeof member !== 'object' || Array.isArray(member) || Object.getPrototypeOf(member) !== Object.prototype) return undefined
  const { id, version } = member as { id?: unknown; version?: unknown }
  if (typeof id !== 'string' || (version !== null && typeof version !== 'string')) return undefined
  const keys = Object.keys(member)
  if (keys.length !== 2 || !Object.hasOwn(member, 'id') || !Object.hasOwn(member, 'version')) return undefined
  return `{"id":${JSON.stringify(id)},"version":${JSON.stringify(version)}}`
}

/**
 * ES2024's `isWellFormed` and `toWellFormed` (Node 20 has both; this project's lib is ES2023): the engine's own
 * scan, several times faster than a lone-surrogate RegExp on the short texts of every audit row.
 */
type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string }

/** Whether a string holds a UTF-16 surrogate without its pair (no UTF-8 text, hence no JSON file, can hold it). */
export function hasLoneSurrogate(text: string): boolean {
  return !(text as WellFormedString).isWellFormed()
}

/** The string with every lone surrogate replaced by U+FFFD (`String.prototype.toWellFormed`). */
export function wellFormed(text: string): string {
  return (text as WellFormedString).toWellFormed()
}
