/**
 * The store: one database handle, one schema and one set of migrations for SQLite and PostgreSQL.
 *
 * @example
 * import { createStore } from '../store/index.js'
 * const store = await createStore({ url: 'sqlite:./data/warrant.db' })
 * await store.migrate()
 */
export { createStore } from './store.js'
export { sqliteHandleOf } from './sqlite-handle.js'
export type { Store, StoreDialect, StoreLog, StoreOptions } from './store.js'
export { InvalidStoreUrlError, parseStoreUrl } from './store-url.js'
export { maskPassword } from '../contract/index.js'
export type { StoreLocation } from './store-url.js'
export { migrateToLatest, storeMigrations } from './migrations.js'
export { isUniqueViolation } from './unique-violation.js'
export type { MigrateOptions, MigrationFailure, MigrationOutcome } from './migrations.js'
export type {
  ApprovalDecision,
  ApprovalRow,
  ApprovalsTable,
  AuditEventRow,
  AuditEventsTable,
  AuditLevel,
  Database,
  Flag,
  IsoTimestamp,
  JsonText,
  KvRow,
  KvTable,
  ReviewSessionRow,
  ReviewSessionsTable,
  WebhookDeliveriesTable,
  WebhookDeliveryRow,
  WebhookDeliveryState,
  NewApprovalRow,
  NewAuditEventRow,
  NewOperationRow,
  NewOperationTargetRow,
  NewPlanRow,
  NewPrincipalRow,
  NewSelectionExclusionRow,
  NewSelectionMemberRow,
  NewSelectionRow,
  NewTokenRow,
  OperationRow,
  OperationState,
  OperationTargetRow,
  OperationTargetUpdate,
  OperationTargetsTable,
  OperationUpdate,
  OperationsTable,
  PlanRow,
  PlanState,
  PlanUpdate,
  PlansTable,
  PrincipalRole,
  PrincipalRow,
  PrincipalsTable,
  SelectionExclusionRow,
  SelectionExclusionsTable,
  SelectionMemberRow,
  SelectionMembersTable,
  SelectionRow,
  SelectionState,
  SelectionUpdate,
  SelectionsTable,
  TargetState,
  TokenRow,
  TokensTable,
} from './schema.js'
export { immediateTransaction, writingTransaction } from './immediate-transaction.js'
export { syncedSqliteCommit, unsyncedSqliteCommit } from './unsynced-commit.js'
export { commitJoinerOf, joinCommits, type CommitJoiner, type JoinedWrites } from './shared-commit.js'
export { withKeyedLock } from './keyed-lock.js'
export { inSlices } from './event-loop-slices.js'
export { deadLocalOwners, defaultOwner, instanceOwner, liveLocalOwners } from './instance-owner.js'
export { leaseEnd, leaseNow, storeNowColumn } from './store-clock.js'
