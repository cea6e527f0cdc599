import type { MiddlewareHandler } from 'hono'
import type { StreamEnd } from '../audit/index.js'
import { type Actor, type Surface, WarrantError, isWarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { clientAddress, createFailureLimit, type FailureLimit } from './failure-limit.js'
import { timesSent } from './sent-headers.js'

/**
 * `audit_details`: set by a route whose audit row says what it changed (a principal's disable). `streamed_answer`: the route answered with a stream (envelope-stream.ts), which the audit trail must not read
 * back; the stream then hands its end to `record_stream_end` (set by the audit trail) before its last bytes.
 */
export type ApiEnv = {
  Variables: {
    actor: Actor
    streamed_answer?: true
    record_stream_end?: (end: StreamEnd) => Promise<void>
    /** what a route's change did, for its audit row's `details` (kept only when the answer is not a refusal) */
    audit_details?: Record<string, unknown>
  }
}

/** One failure limit per gateway, shared by every surface it authenticates (/v1 and /mcp). */
const limits = new WeakMap<Gateway, FailureLimit>()
function limitOf(gateway: Gateway): FailureLimit {
  let limit = limits.get(gateway)
  if (!limit) limits.set(gateway, (limit = createFailureLimit({ now: () => Date.parse(gateway.store.now()) })))
  return limit
}

/**
 * Every /v1 (and /mcp) call carries a bearer token. Failures are logged and rate-limited per client
 * address, across surfaces, so a token cannot be guessed at machine speed.
 */
export function authenticate(gateway: Gateway, surface: Surface = 'http'): MiddlewareHandler<ApiEnv> {
  const limit = limitOf(gateway)
  return async (c, next) => {
    const client = clientAddress(c.env)
    const wait = limit.blockedFor(client)
    if (wait !== null) throw new WarrantError('rate_limited', 'too many failed authentications from this address; wait a minute', { retry_after_seconds: wait })
    // sent twice, the header reaches the app as one value joined by ", " that no token matches: say so, rather than
    // "a bearer token is required" to a client that sent two (and count no guess: neither was tried)
    const times = timesSent(c, 'authorization') ?? 1
    if (times > 1) throw new WarrantError('invalid_request', `the Authorization header is given ${times} times; send one (Authorization: Bearer <token>)`, { field: 'authorization', count: times })
    const header = c.req.header('authorization')
    const token = header?.match(/^Bearer\s+(\S+)$/i)?.[1]
    if (token === undefined) refuseMalformed(header)
    try {
      c.set('actor', await gateway.principals.authenticate(token, surface))
    } catch (error) {
      // only a token refused is a failed guess: a store that could not answer (503) is no fault of the caller's, and
      // counted, an agent retrying through a short outage was locked out (429) with a valid token once it ended
      if (isWarrantError(error) && error.code === 'unauthenticated') limit.fail(client)
      gateway.log.warn({ client, surface, path: c.req.path, reason: (error as Error).message }, 'authentication failed')
      throw error
    }
    await next()
  }
}

/**
 * A header that holds something other than one bearer token (`Bearer a b`; `Bearer a, Bearer b` joined by a proxy;
 * `Basic …`; a bare token) is the client's mistake, said as such rather than "a bearer token is required" to a client
 * that sent one, and tries no token, so it is no failed guess. Absent, blank or `Bearer` alone stays the 401. The
 * refusal never quotes the header: any word of it may be a token.
 */
function refuseMalformed(header: string | undefined): void {
  const words = header?.trim().split(/\s+/).filter((w) => w !== '') ?? []
  if (words.length === 0 || (words.length === 1 && /^Bearer$/i.test(words[0]!))) return
  const problem = /^Bearer$/i.test(words[0]!) ? `it holds ${words.length - 1} words after Bearer` : 'it does not start with the Bearer scheme'
  throw new WarrantError('invalid_request', `the Authorization header must be "Bearer <token>", one token: ${problem}; send one token (Authorization: Bearer <token>)`, { field: 'authorization' })
}
