import { sql, type Kysely } from 'kysely'

/** 0001: the first schema, every table of DESIGN.md's sketch. */
export async function createInitialSchema(db: Kysely<any>): Promise<void> {
  // Every key column is declared NOT NULL: SQLite otherwise accepts NULL in a non-INTEGER primary key.
  // State columns have no CHECK: SQLite cannot alter a CHECK without rebuilding the table, and states
  // are expected to grow; the TypeScript types in schema.ts hold that line instead.

  await db.schema
    .createTable('selections')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('selector', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('complete', 'integer', (c) => c.notNull().check(sql`complete in (0, 1)`))
    .addColumn('completeness', 'text', (c) => c.notNull())
    .addColumn('consistent_snapshot', 'integer', (c) => c.notNull().check(sql`consistent_snapshot in (0, 1)`))
    .addColumn('exclusions', 'text', (c) => c.notNull())
    .addColumn('groups', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('selections_state_expires_idx').on('selections').columns(['state', 'expires_at']).execute()

  await db.schema
    .createTable('selection_members')
    .addColumn('selection_id', 'text', (c) => c.notNull().references('selections.id').onDelete('cascade'))
    .addColumn('ord', 'bigint', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('fields', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('selection_members_pk', ['selection_id', 'ord'])
    .addUniqueConstraint('selection_members_record_uq', ['selection_id', 'record_id'])
    .execute()

  await db.schema
    .createTable('selection_exclusions')
    .addColumn('selection_id', 'text', (c) => c.notNull().references('selections.id').onDelete('cascade'))
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('ord', 'bigint', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('fields', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('selection_exclusions_pk', ['selection_id', 'rule', 'ord'])
    .execute()

  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('selection_id', 'text', (c) => c.notNull().references('selections.id'))
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('action_type', 'text', (c) => c.notNull())
    .addColumn('plan_digest', 'text', (c) => c.notNull())
    .addColumn('selection_digest', 'text', (c) => c.notNull())
    .addColumn('target_count', 'bigint', (c) => c.notNull())
    .addColumn('changes_summary', 'text', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('proposed_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .execute()
  // PostgreSQL does not index the referencing side of a foreign key by itself.
  await db.schema.createIndex('plans_selection_idx').on('plans').column('selection_id').execute()

  await db.schema
    .createTable('approvals')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id'))
    .addColumn('plan_digest', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull().check(sql`decision in ('approve', 'reject')`))
    .addColumn('principal', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('decided_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .execute()
  await db.schema.createIndex('approvals_plan_idx').on('approvals').column('plan_id').execute()

  await db.schema
    .createTable('operations')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('request_fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('stop_rules', 'text', (c) => c.notNull())
    .addColumn('halt_reason', 'text')
    .addColumn('counts', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addUniqueConstraint('operations_idempotency_key_uq', ['idempotency_key'])
    .execute()
  await db.schema.createIndex('operations_plan_idx').on('operations').column('plan_id').execute()
  // Executors look for claimable work by state and lease expiry.
  await db.schema.createIndex('operations_state_lease_idx').on('operations').columns(['state', 'lease_expires_at']).execute()

  await db.schema
    .createTable('operation_targets')
    .addColumn('operation_id', 'text', (c) => c.notNull().references('operations.id').onDelete('cascade'))
    .addColumn('ord', 'bigint', (c) => c.notNull())
    .addColumn('record_id', 'text', (c) => c.notNull())
    .addColumn('expected_version', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('upstream_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('reason', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('operation_targets_pk', ['operation_id', 'ord'])
    .execute()
  await db.schema
    .createIndex('operation_targets_state_idx')
    .on('operation_targets')
    .columns(['operation_id', 'state', 'ord'])
    .execute()

  // No foreign keys: the log outlives, and must not block the removal of, what it mentions.
  await db.schema
    .createTable('audit_events')
    .addColumn('seq', 'bigint', (c) => c.notNull().primaryKey())
    .addColumn('level', 'text', (c) => c.notNull().check(sql`level in ('run', 'call')`))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('principal', 'text')
    .addColumn('surface', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('selection_id', 'text')
    .addColumn('plan_id', 'text')
    .addColumn('operation_id', 'text')
    .addColumn('target_id', 'text')
    .addColumn('details', 'text')
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute()
  for (const column of ['operation_id', 'plan_id', 'principal', 'at'] as const) {
    await db.schema.createIndex(`audit_events_${column}_idx`).on('audit_events').column(column).execute()
  }

  await db.schema
    .createTable('principals')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('disabled_at', 'text')
    .execute()

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.notNull().primaryKey())
    .addColumn('principal_id', 'text', (c) => c.notNull().references('principals.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .addUniqueConstraint('tokens_token_hash_uq', ['token_hash'])
    .execute()
  await db.schema.createIndex('tokens_principal_idx').on('tokens').column('principal_id').execute()

  await db.schema
    .createTable('kv')
    .addColumn('key', 'text', (c) => c.notNull().primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute()
}
