import { Migrator, sql } from 'kysely'
import type { Kysely, Migration, MigrationProvider, MigrationResultSet } from 'kysely'
import { immediateTransaction } from './immediate-transaction.js'
import { addOperationPause } from './migration-operation-pause.js'
import { addSelectionBuilder } from './migration-selection-builder.js'
import { addSelectionIdempotencyKey } from './migration-selection-idempotency.js'
import { addSelectionUpstreamDigest } from './migration-selection-upstream.js'
import { addApprovalToken } from './migration-approval-token.js'
import { createInitialSchema } from './migration-initial-schema.js'
import { addWebhookDeliveryLeaseOwner } from './migration-webhook-delivery-lease.js'
import { addPrincipalLastDisabled } from './migration-principal-last-disabled.js'
import { addSelectionLookalikeIds } from './migration-selection-lookalikes.js'
import { addTargetRateLimits } from './migration-target-rate-limits.js'
import { addRateLimitedTargetIndex } from './migration-rate-limited-index.js'
import { addTargetSource } from './migration-target-source.js'
import { addPlanConfigDrift } from './migration-plan-config-drift.js'
import { addApprovalTtlGiven } from './migration-approval-ttl-given.js'
import { addSelectionOriginIndex } from './migration-selection-origin-index.js'
import { addMembersPruned } from './migration-members-pruned.js'
import { migrationsUnknownHere, newerStoreMessage } from './newer-store.js'

/**
 * The store's schema history, one set for SQLite and PostgreSQL. Only portable types are used: `text` for
 * ids, JSON and ISO timestamps; `integer` for flags and small numbers; `bigint` for counters and `ord`/`seq`
 * (SQLite reads `bigint` as an INTEGER column). Migrations are forward-only: a mistake is fixed by a new one.
 * Names sort in the order they run; append new entries, never rename or edit an applied one. Each runs inside the
 * run's one transaction (see `migrateToLatest`), so a failure never leaves half a schema behind.
 */
export const storeMigrations: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_initial': { up: createInitialSchema },
  '0002_selection_origin_and_compensation': { up: addSelectionOriginAndCompensation },
  '0003_operation_execution': { up: addOperationExecution },
  '0004_review_sessions_and_webhook_deliveries': { up: addReviewSessionsAndWebhookDeliveries },
  '0005_target_unknown_since': { up: addTargetUnknownSince },
  '0006_unique_principal_names': { up: makePrincipalNamesUnique },
  '0007_operation_pause': { up: addOperationPause },
  '0008_selection_builder': { up: addSelectionBuilder },
  '0009_selection_idempotency_key': { up: addSelectionIdempotencyKey },
  '0010_selection_upstream_digest': { up: addSelectionUpstreamDigest },
  '0011_approval_token': { up: addApprovalToken },
  '0012_webhook_delivery_lease_owner': { up: addWebhookDeliveryLeaseOwner },
  '0013_selection_lookalike_ids': { up: addSelectionLookalikeIds },
  '0014_principal_last_disabled': { up: addPrincipalLastDisabled },
  '0015_target_rate_limit_hits': { up: addTargetRateLimits },
  '0016_rate_limited_target_index': { up: addRateLimitedTargetIndex },
  '0017_target_source': { up: addTargetSource },
  '0018_plan_config_drift': { up: addPlanConfigDrift },
  '0019_approval_ttl_given': { up: addApprovalTtlGiven },
  '0020_selection_origin_index': { up: addSelectionOriginIndex },
  '0021_selection_members_pruned': { up: addMembersPruned },
})

/** The result of a migration run; a failure is reported here, not thrown. */
export interface MigrationOutcome {
  /** names of the migrations this run applied and committed, in order; empty when already up to date */
  readonly applied: string[]
  readonly error?: MigrationFailure
}

export interface MigrationFailure {
  /** the migration that failed, or null when the run failed before any migration (connection, lock, history) */
  readonly migration: string | null
  readonly message: string
  readonly cause: unknown
  /** set when the store holds migrations this code does not know (a newer Warrant migrated it): nothing ran */
  readonly newer?: readonly string[]
}

export interface MigrateOptions {
  readonly db: Kysely<any>
  /** defaults to {@link storeMigrations}; tests pass their own to exercise failures */
  readonly migrations?: Readonly<Record<string, Migration>>
}

/** Kysely's record of the migrations applied: in every migrated store (a no-op write to it takes the write lock, see unsynced-commit.ts) */
export const MIGRATION_TABLE = 'warrant_migration'
const MIGRATION_LOCK_TABLE = 'warrant_migration_lock'

/**
 * Bring the schema up to date. Safe to run from several processes at once: the run is one transaction, holding an
 * advisory lock on PostgreSQL and the write lock on SQLite, and a failure rolls it back whole.
 *
 * @example
 * const { applied, error } = await migrateToLatest({ db })
 * if (error) throw new Error(error.message, { cause: error.cause })
 */
export async function migrateToLatest(options: MigrateOptions): Promise<MigrationOutcome> {
  const migrations = options.migrations ?? storeMigrations
  const newer = await migrationsUnknownHere(options.db, MIGRATION_TABLE, migrations)
  if (newer.length > 0) {
    const message = newerStoreMessage(newer, migrations)
    return { applied: [], error: { migration: null, message, cause: new Error(message), newer } }
  }
  const provider: MigrationProvider = { getMigrations: async () => ({ ...migrations }) }
  const migratorOn = (db: Kysely<any>) => new Migrator({ db, provider, migrationTableName: MIGRATION_TABLE, migrationLockTableName: MIGRATION_LOCK_TABLE })
  // PostgreSQL: kysely runs the whole run in one transaction under an advisory lock. SQLite: kysely takes no lock and
  // read which migrations had run before applying any, so two processes opening a new store at once (two commands,
  // a serve and a command) applied them twice and one failed ("table selections already exists"); the run is one
  // transaction there too, taking the write lock up front, and the other process waits its turn and finds it done.
  const { error, results = [] } = options.db.getExecutor().adapter.supportsTransactionalDdl ? await migratorOn(options.db).migrateToLatest() : await inOneSqliteTransaction(options.db, migratorOn)
  const succeeded = results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
  if (error === undefined) return { applied: succeeded }

  // The whole run is one transaction: a failure rolls back the migrations before it too.
  const failed = results.find((r) => r.status === 'Error')?.migrationName ?? null
  const reason = error instanceof Error ? error.message : String(error)
  const message =
    failed === null
      ? `store migrations could not run: ${reason}`
      : `store migration "${failed}" failed: ${reason}` + (succeeded.length > 0 ? ` (rolled back with ${succeeded.join(', ')})` : '')
  return { applied: [], error: { migration: failed, message, cause: error } }
}

/** A failed run's result, thrown so that its transaction rolls back, and returned once it has. */
class RolledBack extends Error {
  constructor(readonly resultSet: MigrationResultSet) {
    super('the migration run failed')
  }
}

/**
 * A SQLite migration run in one BEGIN IMMEDIATE transaction, as the migrator reports it: a failed run rolled back
 * whole; a lock not obtained (another process held it past the busy timeout) or a refused commit as its error. A
 * store already up to date is only read, the lock not asked for: a command starting while another process writes
 * does not wait for it (nor is refused when it is held past the timeout); one migration pending takes the lock, and
 * the run reads again under it which are.
 */
async function inOneSqliteTransaction(db: Kysely<any>, migratorOn: (db: Kysely<any>) => Migrator): Promise<MigrationResultSet> {
  try {
    if ((await migratorOn(db).getMigrations()).every((m) => m.executedAt !== undefined)) return { results: [] }
    return await immediateTransaction(db, async (conn) => {
      const resultSet = await migratorOn(conn).migrateToLatest()
      if (resultSet.error !== undefined) throw new RolledBack(resultSet)
      return resultSet
    })
  } catch (error) {
    return error instanceof RolledBack ? error.resultSet : { error }
  }
}

/**
 * What an operation executes, frozen at commit (the plan, the action as configured then, the selection's
 * selector and snapshot flag), so a restart or another instance runs exactly what was approved even if the
 * config file changed since. Null only for rows written before this migration.
 */
async function addOperationExecution(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operations').addColumn('execution', 'text').execute()
  // The version a target had right after our write: a compensation plan checks it before restoring.
  await db.schema.alterTable('operation_targets').addColumn('after_version', 'text').execute()
}

/**
 * Where a selection came from (a recovery of another selection, a compensation of an operation), the source
 * each frozen record was read from, which operation a plan compensates, and an index to find an excluded
 * record by id (a walk without a snapshot can return a record twice; the store, not memory, remembers it).
 */
async function addSelectionOriginAndCompensation(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('selections').addColumn('origin', 'text').execute()
  await db.schema.alterTable('selection_members').addColumn('source', 'text').execute()
  await db.schema.alterTable('selection_exclusions').addColumn('source', 'text').execute()
  await db.schema.alterTable('plans').addColumn('compensates', 'text').execute()
  await db.schema
    .createIndex('selection_exclusions_record_idx')
    .on('selection_exclusions')
    .columns(['selection_id', 'record_id'])
    .execute()
  await db.schema.createIndex('plans_compensates_idx').on('plans').column('compensates').execute()
}

/**
 * Review-page sessions (a signed-in reviewer: only a hash of the session id and of the bearer token it was
 * opened with are kept) and outbound webhook deliveries (their attempts and failures, shown on plan pages).
 */
async function addReviewSessionsAndWebhookDeliveries(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('review_sessions')
    .addColumn('id_hash', 'text', (c) => c.notNull().primaryKey())
    .addColumn('principal', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('csrf', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('review_sessions_expires_idx').on('review_sessions').column('expires_at').execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('webhook_key', 'text', (c) => c.notNull())
    .addColumn('webhook_label', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('plan_id', 'text')
    .addColumn('operation_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .execute()
  await db.schema.createIndex('webhook_deliveries_plan_idx').on('webhook_deliveries').column('plan_id').execute()
  await db.schema.createIndex('webhook_deliveries_state_lease_idx').on('webhook_deliveries').columns(['state', 'lease_until']).execute()
}

/**
 * When a target became `unknown` (the executor stopped waiting for its write): reconciliation measures its
 * settle window from here, and leaving a target unknown does not move it. Null for rows written before.
 */
async function addTargetUnknownSince(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operation_targets').addColumn('unknown_since', 'text').execute()
}

/**
 * A principal is a person or a named service, and "two distinct reviewers" means two principals: so a name
 * names one principal, and the store enforces it. Stores from before this migration may hold several
 * principals under one name (every token used to get its own). They are kept, not merged: the store cannot
 * tell one person's two tokens from two people who chose the same name, they may hold different roles or
 * scopes (a merge would widen a token's authority), and approvals, sessions and the hash-chained audit log
 * name principal ids that a merge would have to rewrite. Each later one is renamed `NAME~2`, `NAME~3`, … (the
 * earliest keeps the name), so every token keeps exactly its authority and the review page shows two names
 * where there are two principals; an operator who knows they are one person revokes the extra token and adds
 * one with `warrant token create --principal NAME`.
 */
async function makePrincipalNamesUnique(db: Kysely<any>): Promise<void> {
  // Names are compared without case, as people read them ("Alice" and "alice" are one reviewer to a reader).
  // The engine folds the case (its lower() is what the index uses; JavaScript's folding differs outside ASCII).
  const rows: { id: string; name: string; folded: string }[] = await db
    .selectFrom('principals')
    .select(['id', 'name', sql<string>`lower(name)`.as('folded')])
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const taken = new Set(rows.map((r) => r.folded))
  const kept = new Set<string>()
  for (const row of rows) {
    if (!kept.has(row.folded)) {
      kept.add(row.folded)
      continue
    }
    // "~n" is ASCII, so the folded form of the new name is the folded name plus the same suffix.
    let n = 2
    while (taken.has(`${row.folded}~${n}`)) n += 1
    const renamed = `${row.name}~${n}`
    taken.add(`${row.folded}~${n}`)
    await db.updateTable('principals').set({ name: renamed }).where('id', '=', row.id).execute()
  }
  // On the folded name, so two creates of "Alice" and "alice" racing each other cannot both commit.
  await db.schema.createIndex('principals_name_uq').on('principals').expression(sql`lower(name)`).unique().execute()
}
