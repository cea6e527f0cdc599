import type { Context } from 'hono'
import { WarrantError } from '../contract/index.js'
import type { ApiEnv } from './authenticate.js'
import { timesSent } from './sent-headers.js'

/**
 * The request's Idempotency-Key (commits, selections). Sent twice, a header reaches the app as one value joined by
 * ", " (`k1, k2`), a key neither sender meant that would name an answer of its own: refused, naming the header.
 */
export function idempotencyKeyOf(c: Context<ApiEnv>): string | null {
  const times = timesSent(c, 'idempotency-key') ?? 1
  if (times > 1) throw new WarrantError('invalid_request', `the Idempotency-Key header is given ${times} times; send one key`, { field: 'idempotency-key', count: times })
  return c.req.header('idempotency-key') ?? null
}
