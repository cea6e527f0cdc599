import { randomUUID, randomBytes, createHash } from 'node:crypto'
import { z } from 'zod'
import { type Actor, ROLES, type Role, type Scopes, type Surface, WarrantError } from '../contract/index.js'
import type { Store } from '../store/index.js'

export const scopesSchema = z.object({
  resources: z.union([z.literal('*'), z.array(z.string())]),
  actions: z.union([z.literal('*'), z.array(z.string())]),
})

export interface IssuedToken {
  /** The bearer token, shown once: only its hash is stored. */
  readonly token: string
  readonly token_id: string
  readonly principal_id: string
  readonly name: string
  readonly role: Role
  readonly scopes: Scopes
  readonly expires_at: string | null
}

export interface TokenListing {
  readonly token_id: string
  readonly principal_id: string
  readonly name: string
  readonly role: Role
  readonly scopes: Scopes
  readonly created_at: string
  readonly expires_at: string | null
  readonly revoked_at: string | null
  readonly last_used_at: string | null
}

export interface IssueOptions {
  readonly name: string
  readonly role: Role
  /** Agents are scoped; reviewers and admins default to every resource. */
  readonly scopes?: Scopes
  /** Lifetime; default 30 days. `null` never expires (not recommended). */
  readonly ttlMs?: number | null
}

/** Bearer tokens are 256 random bits: a plain SHA-256 of one is as strong as a slow hash, and fast to check. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

const DEFAULT_TTL_MS = 30 * 24 * 60 * 60 * 1000

/**
 * Principals and their tokens, stored hashed with an expiry.
 *
 * @example const { token } = await createPrincipalStore(store).issue({ name: 'ci-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: ['pause_collection'] } })
 */
export function createPrincipalStore(store: Store) {
  /**
   * The same check by the token's hash, for a session opened with that token (the review pages keep the
   * hash, never the token): an expired or revoked token, or a disabled principal, ends the session too.
   */
  async function authenticateHash(tokenHash: string, surface: Surface): Promise<Actor> {
    const row = await store.db
      .selectFrom('tokens')
      .innerJoin('principals', 'principals.id', 'tokens.principal_id')
      .select(['tokens.id as token_id', 'tokens.expires_at', 'tokens.revoked_at', 'principals.id as principal_id', 'principals.name', 'principals.role', 'principals.scopes', 'principals.disabled_at'])
      .where('tokens.token_hash', '=', tokenHash)
      .executeTakeFirst()
    const now = store.now()
    if (!row || row.revoked_at || row.disabled_at || (row.expires_at && row.expires_at <= now))
      throw new WarrantError('unauthenticated', 'the token is unknown, expired or revoked')
    await store.db.updateTable('tokens').set({ last_used_at: now }).where('id', '=', row.token_id).execute()
    return { principal: row.principal_id, name: row.name, role: row.role, scopes: scopesSchema.parse(JSON.parse(row.scopes)), surface }
  }

  return {
    async issue(options: IssueOptions): Promise<IssuedToken> {
      if (!ROLES.includes(options.role)) throw new WarrantError('invalid_request', `role must be one of ${ROLES.join(', ')}`, { field: 'role' })
      const scopes = options.scopes ?? { resources: '*', actions: options.role === 'agent' ? [] : '*' }
      const now = store.now()
      const principalId = `prn_${randomUUID()}`
      const tokenId = `tok_${randomUUID().slice(0, 8)}`
      const token = `wrt_${options.role}_${randomBytes(32).toString('base64url')}`
      const ttl = options.ttlMs === undefined ? DEFAULT_TTL_MS : options.ttlMs
      const expires = ttl === null ? null : new Date(Date.parse(now) + ttl).toISOString()
      await store.db.transaction().execute(async (trx) => {
        await trx.insertInto('principals').values({ id: principalId, name: options.name, role: options.role, scopes: JSON.stringify(scopes), created_at: now, disabled_at: null }).execute()
        await trx
          .insertInto('tokens')
          .values({ id: tokenId, principal_id: principalId, token_hash: hashToken(token), created_at: now, expires_at: expires, revoked_at: null, last_used_at: null })
          .execute()
      })
      return { token, token_id: tokenId, principal_id: principalId, name: options.name, role: options.role, scopes, expires_at: expires }
    },

    /** The actor a bearer token stands for; `unauthenticated` for a missing, unknown, expired or revoked one. */
    async authenticate(token: string | undefined, surface: Surface): Promise<Actor> {
      if (!token) throw new WarrantError('unauthenticated', 'a bearer token is required (Authorization: Bearer <token>)')
      return authenticateHash(hashToken(token), surface)
    },

    authenticateHash,

    async list(): Promise<TokenListing[]> {
      const rows = await store.db
        .selectFrom('tokens')
        .innerJoin('principals', 'principals.id', 'tokens.principal_id')
        .select(['tokens.id as token_id', 'principals.id as principal_id', 'principals.name', 'principals.role', 'principals.scopes', 'tokens.created_at', 'tokens.expires_at', 'tokens.revoked_at', 'tokens.last_used_at'])
        .orderBy('tokens.created_at')
        .execute()
      return rows.map((r) => ({ ...r, scopes: scopesSchema.parse(JSON.parse(r.scopes)) }))
    },

    async revoke(tokenId: string): Promise<void> {
      const result = await store.db.updateTable('tokens').set({ revoked_at: store.now() }).where('id', '=', tokenId).where('revoked_at', 'is', null).executeTakeFirst()
      if (Number(result.numUpdatedRows) === 0) throw new WarrantError('not_found', `no active token "${tokenId}"`, { token_id: tokenId })
    },

    async count(): Promise<number> {
      const row = await store.db.selectFrom('tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      return Number(row.n)
    },
  }
}

export type PrincipalStore = ReturnType<typeof createPrincipalStore>
