/** How long failures from one address are counted, and how many it may have in that time. */
export const FAILURE_WINDOW_MS = 60_000
export const MAX_FAILURES = 20
/**
 * Addresses counted at most (a flood of sources must not grow the map without bound). Past it, windows that
 * ended go first, then addresses that are not blocked, oldest first: a flood cannot unblock the one address
 * that was guessing.
 */
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
      if (failures.size > MAX_ADDRESSES) evict(failures, now, client)
    },
  }
}

/** Down to MAX_ADDRESSES: ended windows, then unblocked addresses, then any, oldest first; never `failing`. */
function evict(failures: Map<string, { count: number; since: number }>, now: number, failing: string): void {
  for (const [address, record] of failures) if (now - record.since >= FAILURE_WINDOW_MS) failures.delete(address)
  // a Map iterates in insertion order: the first addresses are those whose window opened first
  for (const [address, record] of failures) {
    if (failures.size <= MAX_ADDRESSES) return
    if (record.count < MAX_FAILURES && address !== failing) failures.delete(address)
  }
  // `failing` was added last: the oldest go long before it could be reached
  for (const address of failures.keys()) {
    if (failures.size <= MAX_ADDRESSES) return
    failures.delete(address)
  }
}

/**
 * The key of a limit: the address a request came from (the socket's peer; no proxy header is trusted). An IPv6
 * peer counts by its /64, the block one host is usually given: one per address would let a single machine
 * try from as many addresses as it likes.
 *
 * @example clientKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 */
export function clientAddress(env: unknown): string {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming
  return clientKey(incoming?.socket?.remoteAddress ?? 'unknown')
}

export function clientKey(address: string): string {
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  const [head = '', tail] = address.toLowerCase().split('%')[0]!.split('::')
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back]
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return address
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
