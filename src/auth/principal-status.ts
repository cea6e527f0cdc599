import { sql } from 'kysely'
import { type Role, WarrantError } from '../contract/index.js'
import { leaseNow, type Store } from '../store/index.js'
import { principalName } from './principal-name.js'

/** A principal as `warrant principal list` shows it: never its tokens' values. */
export interface PrincipalListing {
  readonly principal_id: string
  readonly name: string
  readonly role: Role
  readonly created_at: string
  readonly disabled_at: string | null
  /** its most recent disable, kept by an enable: the approvals decided before it stay void */
  readonly last_disabled_at: string | null
  /** tokens neither revoked nor expired: what a disable stops, and an enable lets work again */
  readonly live_tokens: number
}

/** What a disable or an enable did: `changed: false` when the principal already stood so (nothing was written). */
export interface PrincipalStatusChange {
  readonly principal_id: string
  readonly name: string
  readonly role: Role
  readonly changed: boolean
  /** the disable time now standing (null once enabled) */
  readonly disabled_at: string | null
  /** the disable time before this command (null: it was enabled) */
  readonly was_disabled_at: string | null
  /** its most recent disable, kept by an enable: the approvals decided before it stay void */
  readonly last_disabled_at: string | null
  readonly live_tokens: number
  /** admins still enabled after this change: 0 is said, never refused (see `warrant principal disable`) */
  readonly enabled_admins_left: number
}

/**
 * Disabling and enabling principals. `disabled_at` is what every check reads (authentication, approvals that
 * count, the committer's authority), each on every request from the store: a change here is seen by every
 * gateway sharing the store on its next request, with nothing to notify.
 */
export function createPrincipalStatus(store: Store) {
  const liveTokens = async (principalId: string, now: string) =>
    Number(
      (
        await store.db
          .selectFrom('tokens')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('principal_id', '=', principalId)
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
          .executeTakeFirstOrThrow()
      ).n,
    )

  async function find(raw: string) {
    const name = principalName(raw)
    const row = await store.db.selectFrom('principals').select(['id', 'name', 'role', 'disabled_at']).where('name', '=', name).executeTakeFirst()
    if (row) return row
    // names are unique whatever their case, so a name that differs only in case names one principal: said, never guessed
    const near = await store.db.selectFrom('principals').select('name').where(sql`lower(name)`, '=', sql`lower(${name})`).executeTakeFirst()
    throw new WarrantError('not_found', `no principal named "${name}"${near ? ` (did you mean "${near.name}"?)` : ''}; \`warrant principal list\` names them`, { field: 'name', name })
  }

  async function setDisabled(raw: string, disable: boolean): Promise<PrincipalStatusChange> {
    const row = await find(raw)
    const now = store.now()
    // conditional: of two disables at once, one changes the row and the other finds it done; the first time stands.
    // The disable's time is the store's (the database's on PostgreSQL), the clock approvals' `decided_at` is read on:
    // `last_disabled_at` is compared with it, and an enable leaves it, so what was decided before stays void for good.
    const at = leaseNow(store.db, now)
    const result = await store.db
      .updateTable('principals')
      .set(disable ? { disabled_at: at, last_disabled_at: at } : { disabled_at: null })
      .where('id', '=', row.id)
      .where('disabled_at', disable ? 'is' : 'is not', null)
      .executeTakeFirst()
    const changed = Number(result.numUpdatedRows) === 1
    const current = await store.db.selectFrom('principals').select(['disabled_at', 'last_disabled_at']).where('id', '=', row.id).executeTakeFirstOrThrow()
    const admins = await store.db
      .selectFrom('principals')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role', '=', 'admin')
      .where('disabled_at', 'is', null)
      .executeTakeFirstOrThrow()
    return {
      principal_id: row.id,
      name: row.name,
      role: row.role,
      changed,
      disabled_at: current.disabled_at,
      was_disabled_at: changed ? row.disabled_at : current.disabled_at,
      last_disabled_at: current.last_disabled_at,
      live_tokens: await liveTokens(row.id, now),
      enabled_admins_left: Number(admins.n),
    }
  }

  return {
    /** Every principal, oldest first, with whether it is disabled and how many live tokens it holds. */
    async listPrincipals(): Promise<PrincipalListing[]> {
      const now = store.now()
      const rows = await store.db.selectFrom('principals').select(['id', 'name', 'role', 'created_at', 'disabled_at', 'last_disabled_at']).orderBy('created_at').orderBy('name').execute()
      return Promise.all(
        rows.map(async (r) => ({ principal_id: r.id, name: r.name, role: r.role, created_at: r.created_at, disabled_at: r.disabled_at, last_disabled_at: r.last_disabled_at, live_tokens: await liveTokens(r.id, now) })),
      )
    },
    /** Its tokens are refused from the next request on, its approvals stop counting; already disabled: nothing changes. */
    disable: (name: string) => setDisabled(name, true),
    /**
     * Its live tokens work again; the approvals it gave before its disable, and those given on plans it proposed before
     * it, stay void (`last_disabled_at` is kept); already enabled: nothing changes.
     */
    enable: (name: string) => setDisabled(name, false),
  }
}

/**
 * A disable's or an enable's reason as recorded: trimmed; `field` is how the surface names it (`--reason`, `reason`). A
 * disable needs one, so whoever reads the audit log later knows why a principal was stopped; a blank one is refused
 * before anything changes.
 */
export function statusReason(raw: string | undefined, required: boolean, field: string): string | null {
  if (raw === undefined && !required) return null
  const reason = (raw ?? '').trim()
  if (reason === '') throw new WarrantError('invalid_request', `give a reason (${field}): what the principal did or why it is stopped; it is kept in the audit log`, { field: 'reason' })
  return reason
}

/** What a disable's or an enable's audit row carries, the same from the CLI and over HTTP: a repeat says it changed nothing. */
export function statusAuditDetails(verb: 'disable' | 'enable', change: PrincipalStatusChange, reason: string | null): Record<string, unknown> {
  return {
    principal_id: change.principal_id,
    principal_name: change.name,
    principal_role: change.role,
    changed: change.changed,
    ...(verb === 'disable' ? { disabled_at: change.disabled_at } : { was_disabled_at: change.was_disabled_at }),
    reason,
    ...(noEnabledAdminLeft(change) ? { no_enabled_admin_left: true } : {}),
  }
}

/** An admin's change left no enabled admin: allowed, and said (GET /metrics and the principals routes need one). */
export function noEnabledAdminLeft(change: PrincipalStatusChange): boolean {
  return change.role === 'admin' && change.enabled_admins_left === 0
}
