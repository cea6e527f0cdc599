import { randomBytes } from 'node:crypto'
import type { ActionConfig, WarrantConfig } from '../config/index.js'
import { digestOf, inScope, WarrantError, type Actor } from '../contract/index.js'
import type { Connector } from '../connectors/index.js'
import type { PlanService } from '../plans/plan-service.js'
import { assertRestorable, placeDriftOf } from '../plans/index.js'
import type { Catalogue } from '../resources/index.js'
import type { SelectionService } from '../selections/selection-service.js'
import type { OperationRow, OperationTargetRow, Store } from '../store/index.js'
import { sameValue, sameVersion } from './effect.js'
import { commitBulkAction, commitPlan, type CommitDeps } from './commit.js'
import type { Telemetry } from '../telemetry/index.js'
import { startRunner, type ExecutorDeps, type ExecutorLog, type OperationRunner, type RunRecorder } from './executor.js'
import { proofsBySource, versionProofDigest, vouches } from './version-proof.js'
import { deadLocalOwners, defaultOwner } from '../store/index.js'
import { claimOperations, otherLeaseHolders, releaseLease } from './lease.js'
import { countTargets, loadOperationRow, rateLimitTotals, targetsInState } from './ledger.js'
import { sourcesOf } from './target-source.js'
import { sleep } from './pacer.js'
import { reconcileUnknownTargets } from './reconcile.js'
import { proposeRemainder } from './remainder.js'
import { FINISHED_STATES, type OperationExecution, type OperationService, type ResultsPage, type TargetState } from './types.js'
import { createResultsCursor, isFinished, isTargetState, operationFollowUps, operationView, parseExecution, rateLimitKindFor, targetResult } from './views.js'

export interface OperationServiceOptions {
  readonly store: Store
  readonly catalogue: Catalogue
  readonly selections: SelectionService
  readonly plans: PlanService
  /** `config.execution`: fixed into each operation's stop rules at commit. */
  readonly execution: WarrantConfig['execution']
  readonly log: ExecutorLog
  readonly clock?: () => Date
  /** How the executor's pacer lets time pass; default a real timer. A test gives it with a virtual `clock`. */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>
  /**
   * This process's name as a lease owner, used as given: a lease it names is this process's own (taken back at once,
   * as the sweeper renews it). The gateway gives `instanceOwner(WARRANT_INSTANCE_ID)`, unique to the process. Default
   * `host:pid:random:machine:start`: a new name each start; leases of a killed process of this machine are taken at
   * once (see `deadLocalOwners`), elsewhere when they expire.
   */
  readonly instanceId?: string
  /**
   * true (default): resume unfinished operations at `recover()`, claim orphaned ones, execute commits.
   * 'commits': execute only what this process commits (a CLI `commit --wait`). false: record commits only;
   * a running gateway executes them.
   */
  readonly executors?: boolean | 'commits'
  /** HMAC key for results cursors; default a random one (cursors then do not survive a restart). */
  readonly cursorKey?: string
  /** Metrics and spans of the execution (targets by outcome, in flight, rate pauses; one span per target). */
  readonly telemetry?: Telemetry
  /** How a resource's connector is found; default the catalogue's. */
  readonly connectorFor?: (resource: string) => Connector
  /** The run-level audit log: recoveries, halts and ends are recorded there. */
  readonly audit?: RunRecorder
  /**
   * How often `waitFor` reads an operation run by another instance (default 25 ms); one this process runs wakes
   * the wait as it ends.
   */
  readonly waitPollMs?: number
}

const DEFAULT_RESULTS_LIMIT = 100
const MAX_RESULTS_LIMIT = 1000
const WAIT_POLL_MS = 25

/**
 * Commit, execution, ledger, stop rules, reconciliation and compensation of bulk operations.
 *
 * @example
 * const operations = createOperationService({ store, catalogue, selections, plans, execution: config.execution, log })
 * await operations.recover()
 * const receipt = await operations.commitPlan(actor, planId, { idempotencyKey: 'k-1' })
 * const view = await operations.waitFor(receipt.operation_id, 60_000)
 */
export function createOperationService(options: OperationServiceOptions): OperationService {
  const { store, catalogue, selections, plans, log } = options
  const clock = options.clock ?? (() => new Date())
  const now = () => clock().toISOString()
  const owner = options.instanceId ?? defaultOwner()
  const executors = options.executors ?? true
  const leaseMs = Math.round(options.execution.lease_seconds * 1000)
  const waitPollMs = options.waitPollMs ?? WAIT_POLL_MS
  const cursors = createResultsCursor(options.cursorKey ?? randomBytes(32).toString('base64url'))
  const connectorFor = options.connectorFor ?? ((resource: string) => catalogue.get(resource).connector)
  const hiddenFields = (resource: string): ReadonlySet<string> => new Set(catalogue.get(resource).config.denied_fields)
  const renderWrite: ExecutorDeps['renderWrite'] = (execution, target) => plans.renderWrite(execution.plan, execution.action_config, target)
  const commitDeps: CommitDeps = { store, catalogue, selections, plans, execution: options.execution, now }
  // A probe vouches only for the connector and action exactly as probed, on the source it wrote to; a compensation's
  // action was never probed.
  const versionProof: ExecutorDeps['versionProof'] = async (execution) => {
    if (execution.plan.compensates || !catalogue.names.includes(execution.plan.resource)) return new Map()
    const resource = catalogue.get(execution.plan.resource)
    const digest = versionProofDigest(resource.config.connector, execution.action_config)
    const proofs = await proofsBySource(store.db, resource.name, execution.plan.action.type, resource.connector.sources)
    return new Map([...proofs].filter(([, proof]) => vouches(proof, digest, clock().getTime())))
  }
  const placeMoved: ExecutorDeps['placeMoved'] = async (execution) => {
    if (!catalogue.names.includes(execution.plan.resource)) return null
    const row = await store.db.selectFrom('plans').select(['resource', 'environment', 'policy']).where('id', '=', execution.plan.plan_id).executeTakeFirst()
    const drift = row ? placeDriftOf(catalogue, row) : []
    return drift.length === 0 ? null : drift.map((d) => d.message).join('; ')
  }
  const executorDeps: ExecutorDeps = {
    store,
    placeMoved,
    owner,
    leaseMs,
    connectorFor,
    renderWrite,
    hiddenFields,
    fieldTypes: (resource: string) => catalogue.get(resource).config.fields,
    versionProof,
    clock,
    log,
    ...(options.wait ? { wait: options.wait } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  }

  const runners = new Map<string, OperationRunner>()
  // waits (`waitFor`) to wake when this process's runner of an operation ends
  const ends = new Map<string, Set<() => void>>()
  const watchEnd = (id: string, wake: () => void) => void (ends.get(id) ?? ends.set(id, new Set()).get(id)!).add(wake)
  const unwatchEnd = (id: string, wake: () => void) => {
    const set = ends.get(id)
    set?.delete(wake)
    if (set?.size === 0) ends.delete(id)
  }
  let sweeper: NodeJS.Timeout | null = null
  let closed = false

  /** Claims (one operation, or any claimable) and starts executing what this process is not running yet. */
  const claimAndRun = async (operationId?: string): Promise<void> => {
    if (!executors || closed || (executors === 'commits' && operationId === undefined)) return
    const at = clock().getTime()
    // An instance of this machine that was killed holds leases nobody renews: they are taken now, not at expiry.
    const takeoverFrom = deadLocalOwners(await otherLeaseHolders(store.db, owner, new Date(at).toISOString()))
    const claimed = await claimOperations(store, {
      owner,
      now: new Date(at).toISOString(),
      leaseMs,
      takeoverFrom,
      ...(operationId === undefined ? { limit: 20 } : { operationId }),
    })
    for (const id of claimed) {
      if (runners.has(id)) continue
      // Closing meanwhile: give the lease back at once rather than make another instance wait for it to expire.
      if (closed) {
        await releaseLease(store.db, id, owner, now())
        continue
      }
      // ours until then on this clock: the claim was sent at `at`, so the store's lease began later
      const runner = startRunner(executorDeps, id, at + leaseMs)
      runners.set(id, runner)
      void runner.done.finally(() => {
        runners.delete(id)
        for (const wake of ends.get(id) ?? []) wake()
        ends.delete(id)
      })
    }
  }
  const claimQuietly = (operationId?: string) =>
    claimAndRun(operationId).catch((error: unknown) => log.warn({ err: error, operation_id: operationId }, 'claiming operations failed; the sweeper retries'))
  // a just-committed operation's claim, so a wait that starts at once finds its runner
  const claims = new Map<string, Promise<void>>()
  const claimCommitted = (operationId: string) => {
    const claim = claimQuietly(operationId)
    claims.set(operationId, claim)
    void claim.finally(() => claims.delete(operationId))
  }

  /** The operation, with its resource in the actor's scope. */
  const loadScoped = async (actor: Actor, operationId: string): Promise<{ row: OperationRow; execution: OperationExecution }> => {
    const row = await loadOperationRow(store.db, operationId)
    const execution = parseExecution(row)
    if (!execution) throw new WarrantError('conflict', `operation "${operationId}" predates execution records and cannot be read here`)
    if (!inScope(actor, execution.plan.resource))
      throw new WarrantError('forbidden', `operation "${operationId}" is on resource "${execution.plan.resource}", outside this token's scope`, { resource: execution.plan.resource })
    return { row, execution }
  }
  const configuredKind = (resource: string) => (catalogue.names.includes(resource) ? catalogue.get(resource).config.connector.kind : null)
  const kindOf = (row: OperationRow) => rateLimitKindFor(parseExecution(row), configuredKind)
  const view = async (row: OperationRow) =>
    operationView(row, isFinished(row) ? null : await countTargets(store.db, row.id), await rateLimitTotals(store.db, row.id), await operationFollowUps(store.db, row), kindOf(row), now())

  return {
    async commitPlan(actor, planId, request) {
      const receipt = await commitPlan(commitDeps, actor, planId, request)
      if (!FINISHED_STATES.has(receipt.status)) claimCommitted(receipt.operation_id)
      return receipt
    },

    async commitBulkAction(actor, resource, request) {
      const receipt = await commitBulkAction(commitDeps, actor, resource, request)
      if (!FINISHED_STATES.has(receipt.status)) claimCommitted(receipt.operation_id)
      return receipt
    },

    async get(actor, operationId) {
      return view((await loadScoped(actor, operationId)).row)
    },

    async results(actor, operationId, query = {}): Promise<ResultsPage> {
      const { row: operation } = await loadScoped(actor, operationId)
      const outcome: TargetState | null = query.outcome ?? null
      if (outcome !== null && !isTargetState(outcome)) throw new WarrantError('invalid_request', `outcome must be one of pending, in_flight, succeeded, failed, skipped, unknown`, { field: 'outcome' })
      const limit = query.limit ?? DEFAULT_RESULTS_LIMIT
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RESULTS_LIMIT)
        throw new WarrantError('invalid_request', `limit must be a whole number from 1 to ${MAX_RESULTS_LIMIT}`, { field: 'limit' })
      const afterOrd = query.cursor ? cursors.decode(query.cursor, operationId, outcome) : -1
      let select = store.db.selectFrom('operation_targets').selectAll().where('operation_id', '=', operationId).where('ord', '>', afterOrd)
      if (outcome !== null) select = select.where('state', '=', outcome)
      const rows = await select.orderBy('ord').limit(limit + 1).execute()
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      const kind = kindOf(operation)
      return {
        operation_id: operationId,
        outcome,
        results: page.map((row) => targetResult(row, kind)),
        next_cursor: rows.length > limit && last ? cursors.encode(operationId, outcome, last.ord) : null,
        rate_limit_kind: kind,
      }
    },

    async reconcile(actor, operationId) {
      const { execution } = await loadScoped(actor, operationId)
      const resource = execution.plan.resource
      // judged where the operation wrote, never on the same ids elsewhere (a record already as approved there would
      // read as our write landed): refused as a run and a compensation are, before any read
      const moved = await placeMoved(execution)
      if (moved !== null)
        throw new WarrantError('conflict', `operation ${operationId} cannot be reconciled here: ${moved}; its unknown targets are judged only where it wrote, so nothing was read (point the resource back to reconcile them)`, {
          reason: 'upstream_moved',
          resource,
          operation_id: operationId,
        })
      const totals = await reconcileUnknownTargets(
        {
          db: store.db,
          connector: connectorFor(resource),
          renderWrite,
          hidden: hiddenFields(resource),
          fieldTypes: catalogue.get(resource).config.fields,
          now,
          settleMs: Math.round(options.execution.reconcile_settle_seconds * 1000),
        },
        operationId,
        execution,
      )
      log.info({ operation_id: operationId, principal: actor.principal, ...totals }, 'unknown targets reconciled')
      return { operation: await view(await loadOperationRow(store.db, operationId)), ...totals }
    },

    async proposeCompensation(actor, operationId) {
      const { row, execution } = await loadScoped(actor, operationId)
      if (!isFinished(row)) throw new WarrantError('conflict', `operation "${operationId}" is still ${row.state}; compensate it once it has stopped`, { state: row.state })
      // judged on the write the operation ran, before its targets are read
      assertRestorable(execution.plan.action.type, execution.action_config)
      assertWrittenAsDefined(execution, plans.actionConfigOf(execution.plan), operationId)
      // `version` (the record's version right after our write) lets the compensation's executor check that
      // nothing changed the record since; it is null when the upstream did not say.
      const targets: { id: string; source: string | null; before: Record<string, unknown>; after: Record<string, unknown>; version: string | null }[] = []
      for (const state of ['succeeded', 'failed'] as const) {
        for (let afterOrd = -1; ; ) {
          const chunk = await targetsInState(store.db, operationId, state, afterOrd, 1000)
          if (chunk.length === 0) break
          afterOrd = chunk[chunk.length - 1]!.ord
          for (const t of chunk) {
            const target = { id: t.record_id, source: t.source, before: t.before ? JSON.parse(t.before) : {}, after: t.after ? JSON.parse(t.after) : {}, version: t.after_version }
            if (state === 'succeeded' || landedAstray(t, target)) targets.push(target)
          }
        }
      }
      if (targets.length === 0) throw new WarrantError('conflict', `operation "${operationId}" changed no record (no target succeeded, none was seen changed by a contradicted write): there is nothing to compensate`)
      // Refused before the read below: a connector pointed elsewhere since is never read for an undo it cannot get.
      await plans.assertCompensable(actor, operationId, execution.plan)
      const now = await readCurrent(connectorFor(execution.plan.resource), targets, hiddenFields(execution.plan.resource))
      const unknown = (await countTargets(store.db, operationId)).unknown
      return plans.proposeCompensation(actor, operationId, execution.plan, targets.map((t) => ({ ...t, current: now.get(t.id) ?? null })), unknown)
    },

    async proposeRemainder(actor, operationId) {
      const loaded = await loadScoped(actor, operationId)
      const resource = loaded.execution.plan.resource
      return proposeRemainder(store, plans, actor, loaded, (targets) => readCurrent(connectorFor(resource), targets, hiddenFields(resource)))
    },

    async recover() {
      if (executors !== true || closed) return
      await claimAndRun()
      if (sweeper === null) {
        // Orphaned operations (an instance died holding a lease) are claimed once their lease expires.
        sweeper = setInterval(() => void claimQuietly(), Math.max(250, Math.floor(leaseMs / 2)))
        sweeper.unref?.()
      }
    },

    async waitFor(operationId, timeoutMs, signal) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const row = await loadOperationRow(store.db, operationId)
        if (isFinished(row) || Date.now() >= deadline || signal?.aborted) return view(row)
        // this process's own runner wakes the wait as it ends; one on another instance is seen by the next poll
        await claims.get(operationId)
        const woken = new AbortController()
        const wake = () => woken.abort()
        const watched = runners.has(operationId)
        if (watched) watchEnd(operationId, wake)
        await sleep(Math.min(waitPollMs, Math.max(1, deadline - Date.now())), signal ? AbortSignal.any([woken.signal, signal]) : woken.signal)
        if (watched) unwatchEnd(operationId, wake)
      }
    },

    async close() {
      closed = true
      if (sweeper !== null) clearInterval(sweeper)
      sweeper = null
      const running = [...runners.values()]
      for (const runner of running) runner.stop()
      await Promise.all(running.map((r) => r.done))
    },
  }
}

/** Targets re-read per call when a compensation is proposed. */
const CURRENT_CHUNK = 200

/**
 * What each target holds now, in the fields the operation wrote, so the compensation's preview shows the data
 * as it is rather than as the operation left it: `{}` for a record that no longer exists, no entry for one
 * that could not be read (the preview then says it does not know).
 */
async function readCurrent(
  connector: Connector,
  targets: readonly { readonly id: string; readonly source: string | null; readonly after: Readonly<Record<string, unknown>> }[],
  hidden: ReadonlySet<string>,
): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>()
  for (let i = 0; i < targets.length; i += CURRENT_CHUNK) {
    const chunk = targets.slice(i, i + CURRENT_CHUNK)
    let read: Awaited<ReturnType<Connector['readByIds']>>
    try {
      read = await connector.readByIds(chunk.map((t) => t.id), undefined, sourcesOf(chunk.map((t) => ({ record_id: t.id, source: t.source }))))
    } catch {
      continue
    }
    for (const id of read.missing) out.set(id, {})
    for (const t of chunk) {
      const record = read.records.get(t.id)
      if (!record) continue
      const fields: Record<string, unknown> = {}
      for (const f of Object.keys(t.after)) if (!hidden.has(f) && Object.hasOwn(record.fields, f)) fields[f] = record.fields[f]
      out.set(t.id, fields)
    }
  }
  return out
}

/**
 * A target `failed` because its write did something other than approved (`effect_contradicted`), yet seen after
 * the write at a new version with a set field changed: our write changed the record, so a compensation restores
 * it as it restores a succeeded one (guarded, like every compensation target, by that version and the values
 * seen then). A contradicted write that changed none of the set fields leaves nothing to restore.
 */
function landedAstray(row: OperationTargetRow, target: { readonly before: Record<string, unknown>; readonly after: Record<string, unknown> }): boolean {
  if (row.reason !== 'effect_contradicted' || row.after_version === null || row.after === null) return false
  if (row.expected_version !== null && sameVersion(row.after_version, row.expected_version)) return false
  return Object.keys(target.before).some((f) => Object.hasOwn(target.after, f) && !sameValue(target.before[f], target.after[f]))
}

/**
 * A compensation is built from the action the operation wrote through as the config defines it now: the fields it
 * restores are its `set`, its write and accepted statuses its `write` and `expect.status`. Redefined since the
 * operation ran (a set field dropped, another write path), the "undo" would restore other fields, or write otherwise,
 * than the operation did: refused until the definition it ran is back.
 */
function assertWrittenAsDefined(execution: OperationExecution, now: ActionConfig, operationId: string): void {
  // the whole `set`, not its field names alone: its templates map the restored values into the write (`renderCompensation`)
  const used = (c: ActionConfig) => digestOf({ set: c.set, write: c.write ?? null, status: c.expect.status })
  if (used(now) === used(execution.action_config)) return
  const type = execution.plan.action.type
  throw new WarrantError(
    'conflict',
    `action "${type}" was redefined (what it sets, its write or its expected statuses) since operation ${operationId} wrote through it; a compensation built from the definition now would not undo what the operation did, so none is proposed (put the definition it ran back to compensate)`,
    { reason: 'action_redefined', action: type, operation_id: operationId },
  )
}
