import { createHmac, timingSafeEqual } from 'node:crypto'

/** The headers a signed delivery carries. */
export const SIGNATURE_HEADER = 'x-warrant-signature'
export const TIMESTAMP_HEADER = 'x-warrant-timestamp'
export const EVENT_HEADER = 'x-warrant-event'
export const DELIVERY_HEADER = 'x-warrant-delivery'

/**
 * `sha256=<hex>`: HMAC-SHA256, keyed with the webhook's secret, over `<timestamp>.<body>` (the timestamp
 * header's value, a dot, the raw body bytes). Signing the timestamp lets a receiver refuse replays.
 *
 * @example signatureOf(secret, '1735689600', body) // 'sha256=…'
 */
export function signatureOf(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`
}

/**
 * For receivers: whether a delivery is authentic and recent. Compares in constant time; refuses a timestamp
 * more than `toleranceSeconds` (default 300) away from `now`, and any timestamp when `now` or the tolerance is not a
 * number (an invalid Date, NaN). `secret` may list several: while a secret is being
 * rotated, a receiver accepts the old and the new one (the gateway signs with one), then drops the old. An empty
 * secret verifies nothing: a signature anyone can compute proves nothing.
 *
 * @example verifySignature({ secret, body, timestamp: req.headers['x-warrant-timestamp'], signature: req.headers['x-warrant-signature'] })
 * @example verifySignature({ secret: [oldSecret, newSecret], body, timestamp, signature }) // during a rotation
 */
export function verifySignature(input: {
  readonly secret: string | readonly string[]
  readonly body: string
  readonly timestamp: string | null | undefined
  readonly signature: string | null | undefined
  readonly toleranceSeconds?: number
  readonly now?: Date
}): boolean {
  const { body, timestamp, signature } = input
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false
  const skew = Math.abs((input.now ?? new Date()).getTime() / 1000 - Number(timestamp))
  // Refused unless shown within the bound: an invalid `now` or a NaN tolerance makes every comparison false, and
  // `skew > tolerance` then let a replay from any time through.
  if (!(skew <= (input.toleranceSeconds ?? 300))) return false
  const given = Buffer.from(signature)
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret
  // every secret is tried (no early exit), so the time taken does not say which one matched
  let ok = false
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret === '') continue
    const expected = Buffer.from(signatureOf(secret, timestamp, body))
    if (expected.length === given.length && timingSafeEqual(expected, given)) ok = true
  }
  return ok
}
