import { randomUUID, randomBytes, createHash } from 'node:crypto'
import { sql } from 'kysely'
import { type Actor, ROLES, type Role, type Scopes, type Surface, WarrantError, codePointName, differingParts, scopesSchema } from '../contract/index.js'
import { isUniqueViolation, leaseEnd, leaseNow, storeNowColumn, writingTransaction, type Store } from '../store/index.js'
import { drawnNameSkeleton, lookalikeCharacters, nameSkeleton } from './name-skeleton.js'
import { newPrincipalName, principalName } from './principal-name.js'
import { createPrincipalStatus } from './principal-status.js'

export { scopesSchema }

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
  /** its principal's: a disabled principal's tokens are refused, whatever their own state */
  readonly disabled_at: string | null
}

export interface IssueOptions {
  /**
   * The new principal's name: the person or named service that holds the token. Names are unique (two
   * "alice" would count as two reviewers): a taken name is refused, and {@link AddTokenOptions} adds a token
   * to the principal who has it.
   */
  readonly name: string
  readonly role: Role
  /** Agents are scoped; reviewers and admins default to every resource. */
  readonly scopes?: Scopes
  /** Lifetime; default 30 days. `null` never expires (not recommended). */
  readonly ttlMs?: number | null
}

export interface AddTokenOptions {
  /** The existing principal's name; the token has that principal's role and scopes. */
  readonly principal: string
  /** Lifetime; default 30 days. `null` never expires (not recommended). */
  readonly ttlMs?: number | null
}

/** Bearer tokens are 256 random bits: a plain SHA-256 of one is as strong as a slow hash, and fast to check. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

const DEFAULT_TTL_MS = 30 * 24 * 60 * 60 * 1000

/** How stale a token's `last_used_at` may be: it is written at most once a minute. */
export const LAST_USED_RESOLUTION_MS = 60_000

/**
 * Principals and their tokens, stored hashed with an expiry.
 *
 * @example const { token } = await createPrincipalStore(store).issue({ name: 'ci-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: ['pause_collection'] } })
 */
export function createPrincipalStore(store: Store) {
  /**
   * The same check by the token's hash, for a session opened with that token (the review pages keep the
   * hash, never the token): an expired or revoked token, or a disabled principal, ends the session too. Expiry is
   * judged at the store's now, read by the same statement: an instance whose clock runs slow must not let in a token
   * that has expired for the others.
   */
  async function authenticateHash(tokenHash: string, surface: Surface): Promise<Actor> {
    return tokenHolds('token_hash', tokenHash, surface, { touch: true })
  }

  /**
   * The actor of the token whose `column` is `value`, refused as `authenticate` refuses (unknown, expired, revoked,
   * its principal disabled). `touch` writes `last_used_at` (to the minute): a request's check does, a re-check
   * within one request does not.
   */
  async function tokenHolds(column: 'token_hash' | 'tokens.id', value: string, surface: Surface, options: { readonly touch: boolean }): Promise<Actor> {
    const row = await store.db
      .selectFrom('tokens')
      .innerJoin('principals', 'principals.id', 'tokens.principal_id')
      .select(['tokens.id as token_id', 'tokens.expires_at', 'tokens.revoked_at', 'tokens.last_used_at', 'principals.id as principal_id', 'principals.name', 'principals.role', 'principals.scopes', 'principals.disabled_at'])
      .select(storeNowColumn(store.db, store.now()).as('store_now'))
      .where(column, '=', value)
      .executeTakeFirst()
    if (!row || row.revoked_at || (row.expires_at && row.expires_at <= row.store_now)) throw new WarrantError('unauthenticated', 'the token is unknown, expired or revoked')
    // Only a token that would otherwise work reaches this: its holder is told why, so an agent stops rather than
    // retries, and its operator knows a person decided it (`warrant principal disable`), not that a token lapsed.
    if (row.disabled_at)
      throw new WarrantError('unauthenticated', `the token's principal "${row.name}" is disabled (since ${row.disabled_at}); its tokens are refused until an operator enables it`, {
        reason: 'principal_disabled',
      })
    // when it was last used is for people to read, on this process's clock: it decides nothing
    const now = store.now()
    // to the minute: an agent polling an operation would otherwise cost a store write (a sync, on SQLite) per request
    if (options.touch && (row.last_used_at === null || Date.parse(now) - Date.parse(row.last_used_at) >= LAST_USED_RESOLUTION_MS))
      await store.db.updateTable('tokens').set({ last_used_at: now }).where('id', '=', row.token_id).execute()
    return { principal: row.principal_id, name: row.name, role: row.role, scopes: storedScopes(row.scopes, row.name), surface, token_id: row.token_id }
  }

  async function insertToken(db: Pick<Store['db'], 'insertInto'>, principal: { id: string; name: string; role: Role; scopes: Scopes }, ttlMs: number | null | undefined): Promise<IssuedToken> {
    const now = store.now()
    const tokenId = `tok_${randomUUID().slice(0, 8)}`
    const token = `wrt_${principal.role}_${randomBytes(32).toString('base64url')}`
    const ttl = ttlMs === undefined ? DEFAULT_TTL_MS : ttlMs
    // its lifetime from the store's now (the database's on PostgreSQL), read back as written: counted on a clock
    // running ahead, a token outlived its time for the other instances
    const written = await db
      .insertInto('tokens')
      .values({ id: tokenId, principal_id: principal.id, token_hash: hashToken(token), created_at: leaseNow(store.db, now), expires_at: ttl === null ? null : leaseEnd(store.db, now, ttl), revoked_at: null, last_used_at: null })
      .returning('expires_at')
      .executeTakeFirstOrThrow()
    return { token, token_id: tokenId, principal_id: principal.id, name: principal.name, role: principal.role, scopes: principal.scopes, expires_at: written.expires_at }
  }

  return {
    ...createPrincipalStatus(store),

    /** A new principal and its first token; `conflict` when the name is taken (a person is one principal). */
    async issue(options: IssueOptions): Promise<IssuedToken> {
      if (!ROLES.includes(options.role)) throw new WarrantError('invalid_request', `role must be one of ${ROLES.join(', ')}`, { field: 'role' })
      const name = newPrincipalName(options.name)
      const scopes = options.scopes ?? { resources: '*', actions: options.role === 'agent' ? [] : '*' }
      const principal = { id: `prn_${randomUUID()}`, name, role: options.role, scopes }
      const taken = (existing: string) =>
        new WarrantError('conflict', `a principal named "${existing}" already exists; to give it another token, use --principal ${existing} (a new name is a new principal)`, { field: 'name', name, existing })
      const readsAs = (existing: string) => {
        const chars = lookalikeCharacters(name).map((ch) => `"${ch}" (${codePointName(ch)})`)
        return new WarrantError(
          'conflict',
          `"${name}" reads as the existing principal "${existing}"${chars.length > 0 ? `: ${chars.join(', ')} ${chars.length === 1 ? 'is' : 'are'} drawn like Latin letters` : ''}; two reviewers must not read as one. Choose a name that reads differently, or use --principal ${existing} to give that principal another token`,
          { field: 'name', name, existing },
        )
      }
      const drawnAs = (existing: string) => {
        const [mine, theirs] = differingParts([name, existing]).map((part) => `"${part}" (${[...part].map(codePointName).join(' ')})`)
        return new WarrantError(
          'conflict',
          `"${name}" reads as the existing principal "${existing}": ${mine} where it has ${theirs}, drawn alike; two reviewers must not read as one. Choose a name that reads differently, or use --principal ${existing} to give that principal another token`,
          { field: 'name', name, existing },
        )
      }
      try {
        return await writingTransaction(store, async (trx) => {
          // "Alice" beside "alice" reads as the same reviewer on the page, so a name differing only in case is taken
          // too. This check gives the message; the unique index on the name holds against a concurrent create.
          const existing = await trx.selectFrom('principals').select('name').where(sql`lower(name)`, '=', sql`lower(${name})`).executeTakeFirst()
          if (existing) throw taken(existing.name)
          // All-Cyrillic "соре" beside "cope" is one script, yet reads as the other reviewer: a name whose look-alike
          // skeleton is taken is taken. Principals are few, so the names are read and compared here; unlike the
          // case rule, no index holds this against a concurrent create of the two.
          const skeleton = nameSkeleton(name)
          const names = (await trx.selectFrom('principals').select('name').execute()).map((p) => p.name)
          const lookalike = names.find((existing) => nameSkeleton(existing) === skeleton)
          if (lookalike !== undefined) throw readsAs(lookalike)
          // "aIice" (a capital I) beside "alice", "rnallory" beside "mallory": one script, drawn alike; one skeleton
          // per name, compared with the new one's, so the check stays linear in the principals
          const drawn = drawnNameSkeleton(name)
          const drawnAlike = names.find((existing) => drawnNameSkeleton(existing) === drawn)
          if (drawnAlike !== undefined) throw drawnAs(drawnAlike)
          await trx.insertInto('principals').values({ ...principal, scopes: JSON.stringify(scopes), created_at: store.now(), disabled_at: null }).execute()
          return insertToken(trx, principal, options.ttlMs)
        })
      } catch (error) {
        if (isUniqueViolation(error)) throw taken(name)
        throw error
      }
    },

    /** Another token for an existing principal (a second device, a rotation): still one reviewer. */
    async addToken(options: AddTokenOptions): Promise<IssuedToken> {
      const name = principalName(options.principal)
      const row = await store.db.selectFrom('principals').select(['id', 'name', 'role', 'scopes', 'disabled_at']).where('name', '=', name).executeTakeFirst()
      if (!row) throw new WarrantError('not_found', `no principal named "${name}"; create it with --name ${name} --role ROLE`, { field: 'principal', name })
      if (row.disabled_at) throw new WarrantError('forbidden', `principal "${name}" is disabled; it gets no new token`, { field: 'principal', name })
      return insertToken(store.db, { id: row.id, name: row.name, role: row.role, scopes: storedScopes(row.scopes, row.name) }, options.ttlMs)
    },

    /** Whether a principal has this name. */
    async exists(name: string): Promise<boolean> {
      return (await store.db.selectFrom('principals').select('id').where('name', '=', name).executeTakeFirst()) !== undefined
    },

    /** The actor a bearer token stands for; `unauthenticated` for a missing, unknown, expired or revoked one. */
    async authenticate(token: string | undefined, surface: Surface): Promise<Actor> {
      if (!token) throw new WarrantError('unauthenticated', 'a bearer token is required (Authorization: Bearer <token>)')
      return authenticateHash(hashToken(token), surface)
    },

    authenticateHash,

    /**
     * The actor as its token stands now, for a request that runs long (a search walking for minutes): refused as
     * `authenticate` refuses once the token was revoked or expired or its principal disabled since the request began,
     * with the scopes it holds now. An actor without a token (the CLI's local operator, the gateway) holds as it is.
     *
     * @example const now = await principals.stillHolds(actor) // throws `unauthenticated` once revoked
     */
    async stillHolds(actor: Actor): Promise<Actor> {
      if (actor.token_id === undefined) return actor
      return tokenHolds('tokens.id', actor.token_id, actor.surface, { touch: false })
    },

    async list(): Promise<TokenListing[]> {
      const rows = await store.db
        .selectFrom('tokens')
        .innerJoin('principals', 'principals.id', 'tokens.principal_id')
        .select(['tokens.id as token_id', 'principals.id as principal_id', 'principals.name', 'principals.role', 'principals.scopes', 'tokens.created_at', 'tokens.expires_at', 'tokens.revoked_at', 'tokens.last_used_at', 'principals.disabled_at'])
        .orderBy('tokens.created_at')
        .execute()
      return rows.map((r) => ({ ...r, scopes: storedScopes(r.scopes, r.name) }))
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

/**
 * A principal's scopes as stored. A row that does not parse (edited by hand, written by another version) is the
 * gateway's fault, thrown as a plain Error (500 `internal`, logged with an id): a ZodError here was answered 400
 * `invalid_request`, blaming a request that named nothing wrong.
 */
function storedScopes(text: string, principal: string): Scopes {
  const parsed = scopesSchema.safeParse(JSON.parse(text))
  if (parsed.success) return parsed.data
  throw new Error(`the stored scopes of principal "${principal}" do not parse: ${parsed.error.message}`)
}
