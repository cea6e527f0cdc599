import { WarrantError } from '../contract/index.js'
import { reapAbandoned } from './build-lease.js'
import type { SelectionContext } from './context.js'

/**
 * A build this process gave up on (its walk or freeze failed) is removed at once (`discard`). When the store refused
 * that removal too (a SQLite write lock another connection held past the busy timeout, a PostgreSQL server cut off:
 * the very failure that ended the build, often), the row stayed `building` under a live builder, which no sweep
 * ever reaps: its members stayed until its expiry, and its idempotency key answered "still being built" to every
 * retry of the request the client was told had failed. Such a build is known abandoned here (`reapAbandoned` reads
 * the reason from `SelectionContext.givenUp`) and reaped as soon as the store takes writes again: marked `failed`
 * with the reason, its members and exclusions removed, its key freed. A retry of the request reaps it first too.
 */

/** First pause before the store is asked again; doubled each time, up to the longest. */
const FIRST_RETRY_MS = 1_000
const LONGEST_RETRY_MS = 30_000

export function giveUpBuild(ctx: SelectionContext, id: string, reason: string): void {
  if (ctx.givenUp.has(id)) return
  ctx.givenUp.set(id, reason)
  const attempt = (pause: number) => {
    const timer = setTimeout(() => {
      reapAbandoned(ctx, id).then(
        () => ctx.givenUp.delete(id),
        (error: unknown) => {
          // busy or cut off: it may clear; anything else (the store closed, its file gone) will not, and a later
          // process reaps the row once this one is gone (its builder then no longer runs)
          if (storeMayClear(error)) attempt(Math.min(pause * 2, LONGEST_RETRY_MS))
          else ctx.givenUp.delete(id)
        },
      )
    }, pause)
    timer.unref?.()
  }
  attempt(FIRST_RETRY_MS)
}

/** The store refused for a while (busy, cut off, silent), not for good (closed, its file gone). */
export function storeMayClear(error: unknown): boolean {
  if (!(error instanceof WarrantError) || error.code !== 'store_unavailable') return false
  const reason = (error.details as { reason?: unknown } | undefined)?.reason
  return reason === 'busy' || reason === 'unreachable' || reason === 'unanswered'
}
