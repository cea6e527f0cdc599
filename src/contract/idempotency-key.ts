import { z } from 'zod'
import type { Actor } from './actor.js'
import { hasLoneSurrogate } from './canonical.js'
import { WarrantError } from './errors.js'

/** The longest idempotency key taken, on every surface and route (commits and selections alike). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255

const KEY_RULE = `1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable characters (no control character, not blank)`

/** Whether a key can name a request: not blank, at most 255 characters, none a control character or half a surrogate pair. */
function usableKey(key: string): boolean {
  return key.trim() !== '' && key.length <= IDEMPOTENCY_KEY_MAX_LENGTH && !/[\u0000-\u001f\u007f]/.test(key) && !hasLoneSurrogate(key)
}

/**
 * An idempotency key as given, checked: a control character (the separator of `scopedIdempotencyKey` among them)
 * or half of a surrogate pair (no database stores one) is refused, naming the field, before anything is looked up or
 * changed: a key cut or cleaned here would name another request.
 */
export function checkIdempotencyKey(key: string, field = 'Idempotency-Key'): string {
  if (!usableKey(key)) throw new WarrantError('invalid_request', `the ${field} must be ${KEY_RULE}`, { field })
  return key
}

/** The same rule as a schema (MCP arguments), so a refusal names the argument. */
export const idempotencyKeySchema = z.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH).refine(usableKey, `must be ${KEY_RULE}`)

/**
 * Idempotency keys belong to the principal that sent them, as payment APIs scope them to an account: the
 * same key from another principal is another key, and can never return (or reveal) someone else's answer.
 * Control characters are refused in keys, so the separator cannot be forged.
 */
export function scopedIdempotencyKey(actor: Actor, key: string): string {
  return `${actor.principal}\u001f${key}`
}
