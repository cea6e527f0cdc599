import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { checkSecrets, type WarrantConfig } from '../config/index.js'
import { assertChainKeyConfigured, assertKeyFileCreatable, createAuditLog, loadAuditKeyring, type AuditLog } from '../audit/index.js'
import { callContext, type UpstreamCall } from '../connectors/index.js'
import { createPrincipalStore, type PrincipalStore } from '../auth/index.js'
import { createCursorCodec, type CursorCodec } from '../inventory/index.js'
import { prepareCatalogue, type Catalogue } from '../resources/index.js'
import { createSelectionService, type SelectionService } from '../selections/index.js'
import { createPlanService, type PlanService, type ReviewPages } from '../plans/index.js'
import { createOperationService, otherLeaseHolders, sweepVersionProofs, type OperationService } from '../operations/index.js'
import { createNotifier, observeOperationEnds, observePlans, type Notifications } from '../notifications/index.js'
import { createReviewService, type ReviewService } from '../review/index.js'
import { WarrantError } from '../contract/index.js'
import { createStore, deadLocalOwners, instanceOwner, InvalidStoreUrlError, type Store } from '../store/index.js'
import { createTelemetry, type GatewayTelemetry } from '../telemetry/index.js'
import { createLogger, type Logger } from './logger.js'
import { observeAudit, observeDecisions, reportUpstreamCall, storeCounts } from './observe-telemetry.js'
import { scheduleRetentionSweeps } from './retention-schedule.js'

/** The assembled gateway that every surface calls: store, resources and the shared services. */
export interface Gateway {
  readonly config: WarrantConfig
  readonly store: Store
  readonly catalogue: Catalogue
  readonly cursorCodec: CursorCodec
  readonly principals: PrincipalStore
  /** Frozen selections: members, exclusions, groups, completeness, export. */
  readonly selections: SelectionService
  /** Plans, approvals and the approval policy. */
  readonly plans: PlanService
  /** Commits, their per-target execution and ledger, reconciliation and compensation. */
  readonly operations: OperationService
  /** The two-level, hash-chained audit log: run level (who asked, who approved) and every upstream call. */
  readonly audit: AuditLog
  /** Outbound webhooks (plan awaits review, decided, operation ended) and their deliveries. */
  readonly notifications: Notifications
  /** Review-page sessions and the queue of plans waiting for a decision. */
  readonly review: ReviewService
  readonly log: Logger
  /** Prometheus metrics (`scrape()` for /metrics) and OpenTelemetry spans, shared by every service. */
  readonly telemetry: GatewayTelemetry
  /**
   * Tell the gateway the address its server actually listens on (after `--host`/`--port` overrides, or the
   * port the system chose for `--port 0`), so review links point there when `server.public_url` is unset.
   *
   * @example gateway.listeningAt({ host: '127.0.0.1', port: (server.address() as AddressInfo).port })
   */
  listeningAt(address: { readonly host: string; readonly port: number }): void
  close(): Promise<void>
}

export interface GatewayOptions {
  readonly config: WarrantConfig
  readonly log?: Logger
  readonly env?: NodeJS.ProcessEnv
  /** Receives every upstream call (the audit log subscribes). */
  readonly onCall?: (call: UpstreamCall) => void
  /**
   * Whether this process executes operations: resumes unfinished ones at open, claims orphaned ones, runs
   * its commits. Default true; short-lived CLI commands pass false (their commits run in `warrant serve`).
   */
  readonly executors?: boolean | 'commits'
  /**
   * Refuse to open when this process could not continue the store's audit chain as it is signed (no key, or a key
   * without the id that signed its end): set by the long-running surfaces (serve, mcp), whose every request is
   * audited, and by every CLI command that changes state. A reading command still opens such a store
   * (`warrant audit verify` says what it finds).
   */
  readonly requireAuditKey?: boolean
  /**
   * Judge every open plan under this config at open and record its drift (default true): the approvals given before a
   * change stop counting even where nobody views the plan. False for a process that only reads (`warrant check`,
   * search, audit queries, often on a trial config against the live store): it neither views nor commits a plan, so
   * its config moves none, and recording would void the live approvals for good on a config never deployed.
   */
  readonly recordConfigMoves?: boolean
  /**
   * This instance's name (default `WARRANT_INSTANCE_ID`): its lease owner is `ID@host:pid:…`, this process's alone,
   * so two processes given one id never run one operation at once (see store/instance-owner.ts `instanceOwner`).
   */
  readonly instanceId?: string
  /** The store's clock (`store.now()`: selection and approval expiry, review sessions, the failed-authentication window), the operations' (leases, ledger times, reconciliation's settle window, Retry-After pauses) and the http connectors' (a Retry-After HTTP-date is read against it); tests pin and move it. */
  readonly clock?: () => Date
}

/**
 * Checks the config (its secrets; the resources' connectors, built), then opens the store (migrating it) and loads
 * the cursor-signing key, which lives in the store so cursors survive a restart and verify on every instance
 * sharing the database.
 *
 * @example const gateway = await openGateway({ config: loadConfigFile('config/demo.yaml') })
 */
export async function openGateway(options: GatewayOptions): Promise<Gateway> {
  const log = options.log ?? createLogger()
  checkBeforeStore(options.config, options.env ?? process.env)
  // a blank or runaway instance id is refused before anything is opened
  const instanceId = instanceOwner(options.instanceId ?? (options.env ?? process.env).WARRANT_INSTANCE_ID, options.instanceId === undefined ? 'WARRANT_INSTANCE_ID' : 'instanceId')
  // Built before the store too: a connector refusing its config (a base_url, a path template, a sql URL) changes
  // nothing. They report their calls to the audit log, which lives in the store: wired below, once it exists.
  const connectors = prepareCatalogue({ config: options.config, env: options.env, ...(options.clock ? { clock: options.clock } : {}) })
  const store = await createStore({ url: options.config.store.url, busyTimeoutMs: options.config.store.busy_timeout_ms, connectTimeoutMs: options.config.store.connect_timeout_ms, statementTimeoutMs: options.config.store.statement_timeout_ms, log, clock: options.clock }).catch(async (error: unknown) => {
    await connectors.close()
    // a store URL that cannot be used is the configuration's fault: one sentence, not a stack trace
    throw error instanceof InvalidStoreUrlError ? new WarrantError('invalid_request', error.message) : error
  })
  try {
    const outcome = await store.migrate()
    // a store a newer Warrant migrated is no bug of ours: refused as the conflict it is, before anything is written
    if (outcome.error?.newer) throw new WarrantError('conflict', outcome.error.message, { newer_migrations: outcome.error.newer })
    // a store that could not be used (busy past its timeout, unreachable) is said to be so, not a bug of ours
    const cause = outcome.error?.cause
    if (cause instanceof WarrantError && cause.code === 'store_unavailable') throw new WarrantError('store_unavailable', `store migration failed: ${outcome.error!.message}`, cause.details)
    if (outcome.error) throw new Error(`store migration failed: ${outcome.error.message}`)
    const key = await signingKey(store)
    const telemetry = createTelemetry({ storeCounts: storeCounts(store) })
    // a lost key file of a signed chain is not written anew (`create: true`): a new key would not verify the chain
    await assertKeyFileCreatable(store.db, options.config.audit?.key)
    const keyring = loadAuditKeyring(options.config.audit?.key, options.env ?? process.env)
    // before anything appends (resumed operations record their ends)
    if (options.requireAuditKey) await assertChainKeyConfigured(store.db, keyring, options.config.audit?.key)
    const deniedFields = Object.values(options.config.resources).flatMap((r) => r.denied_fields)
    const audit = observeAudit(createAuditLog({ store, log, keyring, deniedFields }), telemetry)
    // Every upstream call is logged, with the operation and selection it served when made inside one.
    const onCall = (call: UpstreamCall) => {
      audit.recordCall({ ...call, ...callContext.getStore() })
      reportUpstreamCall(telemetry, call)
      options.onCall?.(call)
    }
    const catalogue = connectors.wire({ onCall, telemetry })
    const cursorCodec = createCursorCodec({ key })
    const selections = createSelectionService({
      store,
      catalogue,
      cursorCodec,
      defaultTtlMinutes: options.config.selection_ttl_minutes,
      owner: instanceId,
      exportStallMs: options.config.server.export_stall_timeout_ms,
    })
    // Selections another process was building when it died (SIGKILL, a crash) are marked failed, their members removed.
    const reap = () =>
      selections
        .reapAbandoned()
        .then((ids) => (ids.length > 0 ? log.warn({ selection_ids: ids }, 'selections whose builder is gone were marked failed and their members removed') : undefined))
        .catch((error: unknown) => log.warn({ err: error }, 'looking for abandoned selections failed; the next sweep retries'))
    await reap()
    // write probes of a resource, action or source no longer declared, or too old to vouch, go (the reader refuses them too)
    await sweepVersionProofs(store.db, catalogue, Date.parse(store.now())).catch((error: unknown) => log.warn({ err: error }, 'removing stale write probes failed; the next start retries'))
    // Reviewers are told (webhooks) when a plan awaits review, is decided, and when an operation ends; the
    // services stay free of delivery code: the plan service is observed, and so is the executor's run recorder.
    // Read at each use: the server's real address is known only once it listens (see Gateway.listeningAt).
    let listening: { readonly host: string; readonly port: number } | null = null
    const reviewBase = () => reviewPagesOf(options.config, listening).base
    const notifications = createNotifier({
      config: options.config.notifications,
      store,
      log,
      env: options.env,
      baseUrl: reviewBase,
      sweep: (options.executors ?? true) === true,
      audit,
      owner: instanceId,
    })
    const plans = observeDecisions(observePlans(createPlanService({ store, catalogue, selections, execution: options.config.execution, cursorCodec, reviewPages: () => reviewPagesOf(options.config, listening) }), notifications.emit, log), telemetry)
    const operations = createOperationService({
      store,
      catalogue,
      selections,
      plans,
      execution: options.config.execution,
      log,
      audit: observeOperationEnds(audit, plans, notifications.emit, log),
      cursorKey: key,
      executors: options.executors ?? true,
      telemetry,
      instanceId,
      ...(options.clock ? { clock: options.clock } : {}),
    })
    // A drift nobody viewed still voids the approvals given before it: each open plan is judged under the config this
    // process opened on, before anything can commit one (a config put back later no longer revives those approvals)
    const moves = options.recordConfigMoves === false ? { drifted: [], unjudged: [] } : await plans.recordOpenPlansMoves()
    if (moves.drifted.length > 0) log.warn({ plan_ids: moves.drifted }, 'the config moved under these open plans: the approvals given before now no longer count')
    if (moves.unjudged.length > 0) log.warn({ plans: moves.unjudged }, 'these open plans could not be judged against the config; a view or a commit judges them again')
    if ((options.executors ?? true) === true) await warnOfSharedInstanceId(store, instanceId, log)
    // After every service exists: unfinished operations resume (their in-flight targets become unknown).
    await operations.recover()
    // a long-running gateway also finds builds that die while it runs (a CLI select killed on the same store)
    const reaper = (options.executors ?? true) === true ? setInterval(() => void reap(), SELECTION_SWEEP_MS) : null
    reaper?.unref?.()
    // retention on a schedule, opted into (retention.sweep_interval_minutes): see retention-schedule.ts
    const every = options.config.retention.sweep_interval_minutes
    const retention =
      (options.executors ?? true) === true && every !== undefined
        ? scheduleRetentionSweeps({ store, audit }, { everyMs: every * 60_000, olderThanMs: options.config.retention.prune_members_after_days * 86_400_000, log })
        : null
    const principals = createPrincipalStore(store)
    return {
      config: options.config,
      store,
      catalogue,
      cursorCodec,
      principals,
      selections,
      plans,
      operations,
      audit,
      notifications,
      review: createReviewService({ store, principals, plans, operations }),
      log,
      telemetry,
      listeningAt(address) {
        listening = address
      },
      async close() {
        if (reaper !== null) clearInterval(reaper)
        // a sweep running stops between statements and records what it did, before the store closes
        await retention?.stop()
        // Executors first: in-flight targets finish and are recorded, leases are released.
        await operations.close()
        await notifications.close()
        await audit.flush()
        await catalogue.close()
        await store.close()
      },
    }
  } catch (error) {
    await connectors.close()
    await store.close()
    throw error
  }
}

/**
 * What the config needs that can be read without a side effect, read before the store is created or migrated,
 * so a config that cannot run changes nothing: every secret, and the audit key unless it is a file still to be
 * written (whether it may be depends on the store's chain: `assertKeyFileCreatable`).
 */
function checkBeforeStore(config: WarrantConfig, env: NodeJS.ProcessEnv): void {
  checkSecrets(config, env)
  const key = config.audit?.key
  if (!(key !== undefined && 'file' in key && key.create === true && !existsSync(key.file))) loadAuditKeyring(key, env)
}

/**
 * Says so, loudly, when another process not proven gone holds live leases under this instance's id (replicas given one
 * `WARRANT_INSTANCE_ID`, or a restart on another host or container): its operations are not resumed here until it
 * releases them or their lease expires.
 */
async function warnOfSharedInstanceId(store: Store, owner: string, log: Logger): Promise<void> {
  const at = owner.lastIndexOf('@')
  if (at < 0) return
  const id = owner.slice(0, at)
  const holders = (await otherLeaseHolders(store.db, owner, store.now())).filter((o) => o === id || o.startsWith(`${id}@`))
  const dead = new Set(deadLocalOwners(holders))
  const others = holders.filter((o) => !dead.has(o))
  if (others.length > 0)
    log.warn(
      { instance_id: id, lease_owners: others },
      `another process holds live operation leases under WARRANT_INSTANCE_ID "${id}": if it still runs, give each instance its own id; its operations resume here only once it releases them or their lease expires (execution.lease_seconds)`,
    )
}

/** How often a serving gateway looks for selections whose builder died. */
const SELECTION_SWEEP_MS = 15_000

async function signingKey(store: Store): Promise<string> {
  await store.db
    .insertInto('kv')
    .values({ key: 'cursor_signing_key', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute()
  const row = await store.db.selectFrom('kv').select('value').where('key', '=', 'cursor_signing_key').executeTakeFirstOrThrow()
  return row.value
}

/**
 * Where links to the review pages point (plans' review_url, notifications): `server.public_url`, else the
 * address the server listens on (as told by `listeningAt`), else the one the config names, which nothing in this
 * process serves (`served: false`: a plan then gives no review_url but a hint, see plans/review-link.ts). Never a
 * request's Host header: under DNS rebinding that is an attacker's name. With host 0.0.0.0 (every interface) set
 * public_url to a name people can open.
 */
function reviewPagesOf(config: WarrantConfig, listening: { readonly host: string; readonly port: number } | null): ReviewPages {
  if (config.server.public_url) return { base: config.server.public_url.replace(/\/+$/, ''), served: true }
  const address = listening ?? config.server
  const host = address.host.includes(':') ? `[${address.host}]` : address.host
  return { base: `http://${host}:${address.port}`, served: listening !== null }
}
