import type { FieldTypeNames, RunEvent } from '../contract/index.js'
import type { Connector } from '../connectors/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'
import type { Store } from '../store/index.js'
import type { Telemetry } from '../telemetry/index.js'
import type { OperationExecution } from './types.js'
import type { VersionProofs } from './version-proof.js'

// What the executor (executor.ts) is given and what it hands back: kept apart so the run itself stays one file.

/** The few log methods the executor uses; a pino logger fits. */
export interface ExecutorLog {
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
}

export interface ExecutorDeps {
  readonly store: Store
  /** This instance's lease owner name. */
  readonly owner: string
  readonly leaseMs: number
  readonly connectorFor: (resource: string) => Connector
  readonly renderWrite: (execution: OperationExecution, target: { readonly id: string; readonly version: string | null }) => RenderedWrite
  readonly hiddenFields: (resource: string) => ReadonlySet<string>
  /** The resource's declared field types, for the filters the executor evaluates (precondition, membership). */
  readonly fieldTypes: (resource: string) => FieldTypeNames
  readonly clock: () => Date
  /** How the pacer lets time pass (a real timer by default); with `clock`, what a test drives virtually. */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>
  readonly log: ExecutorLog
  /** The run-level audit log, if any: the executor records what it decided (recovered, halted, finished). */
  readonly audit?: RunRecorder
  /** Metrics and spans: one span per operation run, one per target (see target-step). */
  readonly telemetry?: Telemetry
  /**
   * The write probes that vouch, for this operation's action, that the upstream refuses a stale version, by source
   * (version-proof.ts). A target of a source with one, read with its batch or window, is not read again alone.
   */
  readonly versionProof?: (execution: OperationExecution) => Promise<VersionProofs>
  /**
   * Why the plan's resource no longer writes where the plan was proposed (its environment, or where its connector
   * points), or null. The commit judged it in the process that recorded it; the run may be another's, started on
   * another config, so each run judges it again before it sends anything.
   */
  readonly placeMoved?: (execution: OperationExecution) => Promise<string | null>
}

/** Where run-level events go (the audit log's `record`). A failure to record is logged, never fatal. */
export interface RunRecorder {
  record(event: RunEvent): Promise<unknown>
}

/** One operation being executed by this process. */
export interface OperationRunner {
  readonly operationId: string
  /** Settles when the runner has stopped (finished, halted, lost its lease, or was stopped). */
  readonly done: Promise<void>
  /** Stops starting targets; those in flight finish and are recorded; the lease is released. */
  stop(): void
}

