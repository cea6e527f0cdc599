import { wellFormed } from '../contract/index.js'

/** What a secret's value is replaced with. */
export const REDACTED = '[redacted]'

/**
 * Key names whose values never enter the log: authorization headers, tokens (`token`, `access_token`,
 * `card_token`, but not `token_id`), secrets, passwords, API keys, cookies, credentials, private keys.
 */
const SECRET_KEY = /(authori[sz]ation|token$|secret|passw(or)?d|passphrase|api[-_]?key|cookie|credential|private[-_]?key|csrf)/i

/** Values that are secrets whatever their key: bearer headers and Warrant's own tokens. */
const SECRET_VALUE = /^\s*bearer\s+\S|\bwrt_(agent|reviewer|admin)_[A-Za-z0-9_-]{16,}/i

const MAX_DEPTH = 32

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key)
}

/**
 * A JSON-safe copy of a value with every secret replaced by `[redacted]`: values under secret-like keys at
 * any depth, values under a resource's denied field names (a refused filter on `notes` keeps the name, never
 * the value), and strings that look like a bearer token. `undefined` members are dropped, as JSON does;
 * functions, symbols and bigints become strings naming their type rather than failing the append.
 *
 * @example scrubSecrets({ filter: { status: 'x' }, headers: { Authorization: 'Bearer abc' } })
 * // { filter: { status: 'x' }, headers: { Authorization: '[redacted]' } }
 */
export function scrubSecrets(value: unknown, deniedFields: ReadonlySet<string> = NONE): unknown {
  return scrub(value, 0, new Set(), deniedFields)
}

const NONE: ReadonlySet<string> = new Set()

function scrub(value: unknown, depth: number, seen: Set<object>, denied: ReadonlySet<string>): unknown {
  if (value === null) return null
  switch (typeof value) {
    case 'string':
      // Well-formed, so canonical JSON (which refuses a lone surrogate) never fails on input
      return SECRET_VALUE.test(value) ? REDACTED : wellFormed(value)
    case 'number':
      return Number.isFinite(value) ? value : String(value)
    case 'boolean':
      return value
    case 'undefined':
      return null
    case 'bigint':
      return value.toString()
    case 'function':
    case 'symbol':
      return `[${typeof value}]`
  }
  const object = value as object
  if (depth >= MAX_DEPTH) return '[too deep]'
  if (seen.has(object)) return '[circular]'
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString()
  seen.add(object)
  try {
    if (Array.isArray(object)) return object.map((item) => scrub(item, depth + 1, seen, denied))
    if (typeof (object as { toJSON?: unknown }).toJSON === 'function') return scrub((object as { toJSON(): unknown }).toJSON(), depth + 1, seen, denied)
    // No prototype: a key named __proto__ is kept as data, never as the object's prototype
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>
    for (const [key, member] of Object.entries(object)) {
      if (member === undefined) continue
      out[wellFormed(key)] = isSecretKey(key) || denied.has(key) ? REDACTED : scrub(member, depth + 1, seen, denied)
    }
    return out
  } finally {
    seen.delete(object)
  }
}
