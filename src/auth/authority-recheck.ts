import { type Actor, WarrantError, inScope, isWarrantError } from '../contract/index.js'
import type { PrincipalStore } from './principals.js'

/** How often, at most, a long request asks again whether its token still holds. */
export const RECHECK_EVERY_MS = 1000

export interface AuthorityRecheckOptions {
  /** at most one store read per this many ms (default RECHECK_EVERY_MS): a page of a fast walk costs none */
  readonly everyMs?: number
  readonly now?: () => number
}

/**
 * A check a long request (a search walking for up to its 5-minute deadline) runs before it hands over more records:
 * the request was authorised once, at its start, and without it a token revoked, its principal disabled or the
 * resource taken out of its scope meanwhile went on receiving records until the walk ended. Asked at most once
 * every `everyMs`, counted from the request's own authentication; throws `unauthenticated` or `forbidden`.
 *
 * @example const recheck = authorityRecheck(gateway.principals, actor, 'subscriptions'); await recheck() // before each page
 */
export function authorityRecheck(principals: Pick<PrincipalStore, 'stillHolds'>, actor: Actor, resource: string, options: AuthorityRecheckOptions = {}): () => Promise<void> {
  const { everyMs, now } = { everyMs: RECHECK_EVERY_MS, now: Date.now, ...options } satisfies Required<AuthorityRecheckOptions>
  let askedAt = now()
  return async () => {
    if (now() - askedAt < everyMs) return
    askedAt = now()
    let current: Actor
    try {
      current = await principals.stillHolds(actor)
    } catch (error) {
      if (!isWarrantError(error)) throw error
      throw new WarrantError(error.code, `${error.message}: it stopped holding while this request ran, and nothing read after that is answered`, error.details)
    }
    if (!inScope(current, resource))
      throw new WarrantError('forbidden', `resource "${resource}" left this token's scope while this request ran; nothing read after that is answered`, { resource })
  }
}
