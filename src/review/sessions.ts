import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { type Actor, WarrantError } from '../contract/index.js'
import { hashToken, type PrincipalStore } from '../auth/index.js'
import { leaseEnd, leaseNow, storeNowColumn, type Store } from '../store/index.js'

/** A signed-in reviewer, as a request sees it. */
export interface ReviewSession {
  readonly actor: Actor
  /** Echoed by every form of this session; compared in constant time. */
  readonly csrf: string
  readonly expires_at: string
}

export interface OpenedSession extends ReviewSession {
  /** The session id for the cookie. Shown once: the store keeps only its hash. */
  readonly sessionId: string
}

export interface ReviewSessions {
  /**
   * Opens a session with a bearer token. `unauthenticated` for an unknown, expired or revoked token;
   * `forbidden` for an agent's token (agents never review).
   */
  signIn(token: string): Promise<OpenedSession>
  /** The session a cookie names, or null when it is unknown, idle too long, past its end, or its token no longer authenticates. */
  resume(sessionId: string | undefined): Promise<ReviewSession | null>
  signOut(sessionId: string | undefined): Promise<void>
  /** Whether a form's CSRF token is this session's (constant time). */
  csrfMatches(session: ReviewSession, given: unknown): boolean
  /** Deletes ended sessions; returns how many. */
  sweep(): Promise<number>
}

export interface ReviewSessionOptions {
  readonly store: Store
  readonly principals: PrincipalStore
  /** Absolute lifetime of a session; default 8 hours (never past the token's own expiry: each request re-checks it). */
  readonly ttlMs?: number
  /** A session unused this long ends; default 1 hour. */
  readonly idleMs?: number
}

const DEFAULT_TTL_MS = 8 * 60 * 60 * 1000
const DEFAULT_IDLE_MS = 60 * 60 * 1000
/** `last_seen_at` is written at most this often, not on every page. */
const TOUCH_EVERY_MS = 60 * 1000

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex')
const REVIEW_ROLES: ReadonlySet<Actor['role']> = new Set(['reviewer', 'admin'])

/**
 * Review-page sessions. A reviewer signs in once with a bearer token; the cookie then carries a random
 * session id. The store keeps the hash of that id and the hash of the token, never either in clear, and each
 * request re-authenticates the token by its hash (the principal store's rule): revoking the token, or
 * disabling the principal, ends the session at once. Its end and idle time are written and judged on the store's
 * clock (the database's on PostgreSQL, see store/store-clock.ts): every instance sharing the store ends it alike.
 *
 * @example
 * const sessions = createReviewSessions({ store, principals })
 * const { sessionId, csrf } = await sessions.signIn(token)
 * const session = await sessions.resume(sessionId) // { actor, csrf, expires_at } or null
 */
export function createReviewSessions(options: ReviewSessionOptions): ReviewSessions {
  const { store, principals } = options
  const db = store.db
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS
  const later = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()

  return {
    async signIn(token) {
      const actor = await principals.authenticate(token.trim() || undefined, 'ui')
      if (!REVIEW_ROLES.has(actor.role))
        throw new WarrantError('forbidden', `the review pages are for reviewers and admins; this token is an ${actor.role}'s, and agents never approve`, { role: actor.role })
      const sessionId = randomBytes(32).toString('base64url')
      const csrf = randomBytes(32).toString('base64url')
      const now = store.now()
      const written = await db
        .insertInto('review_sessions')
        .values({ id_hash: sha256(sessionId), principal: actor.principal, token_hash: hashToken(token.trim()), csrf, created_at: leaseNow(db, now), last_seen_at: leaseNow(db, now), expires_at: leaseEnd(db, now, ttlMs) })
        .returning('expires_at')
        .executeTakeFirstOrThrow()
      return { sessionId, csrf, actor, expires_at: written.expires_at }
    },

    async resume(sessionId) {
      if (!sessionId || sessionId.length > 200) return null
      const idHash = sha256(sessionId)
      const row = await db.selectFrom('review_sessions').selectAll().select(storeNowColumn(db, store.now()).as('store_now')).where('id_hash', '=', idHash).executeTakeFirst()
      if (!row) return null
      const now = row.store_now
      if (row.expires_at <= now || later(row.last_seen_at, idleMs) <= now) {
        await db.deleteFrom('review_sessions').where('id_hash', '=', idHash).execute()
        return null
      }
      let actor: Actor
      try {
        actor = await principals.authenticateHash(row.token_hash, 'ui')
      } catch (error) {
        if (error instanceof WarrantError && error.code === 'unauthenticated') {
          await db.deleteFrom('review_sessions').where('id_hash', '=', idHash).execute()
          return null
        }
        throw error
      }
      if (actor.principal !== row.principal || !REVIEW_ROLES.has(actor.role)) return null
      if (later(row.last_seen_at, TOUCH_EVERY_MS) <= now) await db.updateTable('review_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute()
      return { actor, csrf: row.csrf, expires_at: row.expires_at }
    },

    async signOut(sessionId) {
      if (!sessionId || sessionId.length > 200) return
      await db.deleteFrom('review_sessions').where('id_hash', '=', sha256(sessionId)).execute()
    },

    csrfMatches(session, given) {
      if (typeof given !== 'string' || given.length === 0) return false
      // Hashing both sides gives equal lengths, so the comparison time says nothing about the token.
      return timingSafeEqual(Buffer.from(sha256(session.csrf), 'hex'), Buffer.from(sha256(given), 'hex'))
    },

    async sweep() {
      const result = await db.deleteFrom('review_sessions').where('expires_at', '<=', leaseNow(db, store.now())).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
