import type { MiddlewareHandler } from 'hono'
import { type Actor, type Surface, WarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'

export type ApiEnv = { Variables: { actor: Actor } }

const WINDOW_MS = 60_000
const MAX_FAILURES = 20

/** One failure count per gateway, shared by every surface it authenticates (/v1 and /mcp). */
const failureCounts = new WeakMap<Gateway, Map<string, { count: number; since: number }>>()
function failuresOf(gateway: Gateway): Map<string, { count: number; since: number }> {
  let failures = failureCounts.get(gateway)
  if (!failures) failureCounts.set(gateway, (failures = new Map()))
  return failures
}

/**
 * Every /v1 (and /mcp) call carries a bearer token. Failures are logged and rate-limited per client
 * address, across surfaces, so a token cannot be guessed at machine speed.
 */
export function authenticate(gateway: Gateway, surface: Surface = 'http'): MiddlewareHandler<ApiEnv> {
  const failures = failuresOf(gateway)
  return async (c, next) => {
    const client = clientAddress(c.req.raw, c.env)
    const now = Date.now()
    const record = failures.get(client)
    if (record && now - record.since < WINDOW_MS && record.count >= MAX_FAILURES)
      throw new WarrantError('rate_limited', 'too many failed authentications from this address; wait a minute', { retry_after_seconds: Math.ceil((record.since + WINDOW_MS - now) / 1000) })
    const header = c.req.header('authorization')
    const token = header?.match(/^Bearer\s+(\S+)$/i)?.[1]
    try {
      c.set('actor', await gateway.principals.authenticate(token, surface))
    } catch (error) {
      const fresh = !record || now - record.since >= WINDOW_MS
      failures.set(client, fresh ? { count: 1, since: now } : { count: record.count + 1, since: record.since })
      if (failures.size > 10_000) failures.clear()
      gateway.log.warn({ client, surface, path: c.req.path, reason: (error as Error).message }, 'authentication failed')
      throw error
    }
    await next()
  }
}

function clientAddress(_request: Request, env: unknown): string {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming
  return incoming?.socket?.remoteAddress ?? 'unknown'
}
