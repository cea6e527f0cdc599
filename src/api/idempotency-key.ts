import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'
import { WarrantError } from '../contract/index.js'
import type { ApiEnv } from './authenticate.js'

/**
 * The request's Idempotency-Key (commits, selections). Sent twice, a header reaches the app as one value joined by
 * ", " (`k1, k2`), a key neither sender meant that would name an answer of its own: refused, naming the header.
 */
export function idempotencyKeyOf(c: Context<ApiEnv>): string | null {
  const distinct = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.headersDistinct?.['idempotency-key']
  if (distinct !== undefined && distinct.length > 1)
    throw new WarrantError('invalid_request', `the Idempotency-Key header is given ${distinct.length} times; send one key`, { field: 'idempotency-key', count: distinct.length })
  return c.req.header('idempotency-key') ?? null
}
