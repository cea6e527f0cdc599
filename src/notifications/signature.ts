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
 * more than `toleranceSeconds` (default 300) away from `now`.
 *
 * @example verifySignature({ secret, body, timestamp: req.headers['x-warrant-timestamp'], signature: req.headers['x-warrant-signature'] })
 */
export function verifySignature(input: {
  readonly secret: string
  readonly body: string
  readonly timestamp: string | null | undefined
  readonly signature: string | null | undefined
  readonly toleranceSeconds?: number
  readonly now?: Date
}): boolean {
  const { secret, body, timestamp, signature } = input
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false
  const skew = Math.abs((input.now ?? new Date()).getTime() / 1000 - Number(timestamp))
  if (skew > (input.toleranceSeconds ?? 300)) return false
  const expected = Buffer.from(signatureOf(secret, timestamp, body))
  const given = Buffer.from(signature)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
