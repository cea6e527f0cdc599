/** How long failures from one address are counted, and how many it may have in that time. */
export const FAILURE_WINDOW_MS = 60_000
export const MAX_FAILURES = 20
/** Past this many addresses the counts are dropped rather than grown without bound (a flood of sources). */
const MAX_ADDRESSES = 10_000

/**
 * Failed attempts (authentication, sign-in) counted per client address in a fixed window that opens at the
 * address's first failure: after `MAX_FAILURES` in the window the address is refused until the window ends, so
 * a token cannot be guessed at machine speed. Time is the gateway's clock (the store's), so tests can move it.
 */
export interface FailureLimit {
  /** Whole seconds until the address may try again, or null when it may try now. */
  blockedFor(client: string): number | null
  /** One more failure from the address. */
  fail(client: string): void
}

export function createFailureLimit(options: { readonly now: () => number }): FailureLimit {
  const failures = new Map<string, { count: number; since: number }>()
  return {
    blockedFor(client) {
      const now = options.now()
      const record = failures.get(client)
      if (!record || now - record.since >= FAILURE_WINDOW_MS || record.count < MAX_FAILURES) return null
      return Math.ceil((record.since + FAILURE_WINDOW_MS - now) / 1000)
    },
    fail(client) {
      const now = options.now()
      const record = failures.get(client)
      const fresh = !record || now - record.since >= FAILURE_WINDOW_MS
      failures.set(client, fresh ? { count: 1, since: now } : { count: record.count + 1, since: record.since })
      if (failures.size > MAX_ADDRESSES) failures.clear()
    },
  }
}

/** The address a request came from (the socket's peer; no proxy header is trusted), the key of a limit. */
export function clientAddress(env: unknown): string {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming
  return incoming?.socket?.remoteAddress ?? 'unknown'
}
