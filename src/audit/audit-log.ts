import type { UpstreamCall } from '../connectors/index.js'
import type { AuditEventRow, Store } from '../store/index.js'
import { createAppendQueue, type AuditLogLogger } from './append.js'
import { toEntry, type AuditEntry } from './entry.js'
import { callRow, runRow, type CallContext, type CallEvent, type NewRow, type RunEvent } from './events.js'
import { exportAuditNdjson } from './export.js'
import { recordsChanged, whoAsked, type RecordsChanged, type RecordsChangedOptions, type WhoAsked } from './incidents.js'
import { queryAuditLog, type AuditPage, type AuditQuery } from './query.js'
import { verifyAuditChain, type VerifyOptions, type VerifyResult } from './verify.js'
import { signCheckpoint, type AuditCheckpoint } from './checkpoint.js'
import { acknowledgeBreak, type AcknowledgeRequest } from './acknowledge.js'
import type { AcknowledgedBreak } from './acknowledged-breaks.js'
import { readStoredHead } from './head.js'
import type { AuditKeyring } from './keyring.js'
import { WarrantError, type Actor } from '../contract/index.js'

export interface AuditLogOptions {
  readonly store: Store
  /** source of `at`; defaults to the store's clock */
  readonly clock?: () => Date
  /** where failed call-level appends are reported (they never reject); defaults to a JSON line on stderr */
  readonly log?: AuditLogLogger
  /** most rows appended in one transaction; default 500 */
  readonly maxBatch?: number
  /** the HMAC keys the chain is signed with (kept outside the store); null: an unkeyed chain */
  readonly keyring?: AuditKeyring | null
  /** field names whose values never enter the log (every resource's denied fields) */
  readonly deniedFields?: Iterable<string>
}

export interface AuditLog {
  /** Append a run-level event; resolves once it is committed, with its seq and hash. */
  record(event: RunEvent): Promise<AuditEntry>
  /**
   * Append a call-level event. Synchronous and never throws or rejects: the row is queued and appended in
   * order with others in one transaction; a failure is logged. `flush()` waits for it.
   */
  recordCall(call: CallEvent): void
  /**
   * A connector `onCall` listener that records each call with a fixed context, e.g. for one operation's
   * executor: `createSqlConnector({ resource, onCall: audit.callRecorder({ operation_id, selection_digest }) })`.
   */
  callRecorder(context?: CallContext): (call: UpstreamCall) => void
  /** Resolves when everything queued so far has been written (or has failed and been logged). */
  flush(): Promise<void>
  /** Recompute the chain; with a checkpoint exported earlier, also prove the chain still holds it. */
  verify(options?: Pick<VerifyOptions, 'onProgress'> & { readonly checkpoint?: AuditCheckpoint }): Promise<VerifyResult>
  /**
   * Append a `audit checkpoint` row (so the head is signed with the current key), then return the head signed
   * as a checkpoint to keep outside the store. Refused without a key: an unsigned checkpoint proves nothing.
   */
  checkpoint(actor: Actor | null): Promise<AuditCheckpoint>
  /**
   * Acknowledge the chain's first bad row, as `verify` names it, so the gateway can serve again: a signed row records
   * the break for good (see acknowledge.ts). Refused without a key, a reason, a break, or at another seq.
   */
  acknowledge(request: AcknowledgeRequest): Promise<AcknowledgedBreak>
  /** whether rows are signed, and with which key */
  readonly keyId: string | null
  query(filter?: AuditQuery): Promise<AuditPage>
  /** Every row as stored (summary and details as their JSON text, so hashes can be recomputed), one JSON line each, ending in `\n`. */
  exportNdjson(): AsyncIterable<string>
  whoAsked(operationId: string): Promise<WhoAsked>
  recordsChanged(operationId: string, options?: RecordsChangedOptions): Promise<RecordsChanged>
}

const DEFAULT_MAX_BATCH = 500

/**
 * The two-level, hash-chained, append-only audit log.
 *
 * @example
 * const audit = createAuditLog({ store, log })
 * await audit.record({ actor, action: 'POST /v1/plans/{id}/approvals', plan_id, summary: { plan_id }, details: { decision: 'approve', plan_digest } })
 * const connector = createSqlConnector({ resource, onCall: (call) => audit.recordCall({ ...call, operation_id }) })
 * const result = await audit.verify() // { ok: true, rows } or the first bad row
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { store } = options
  const db = store.db
  const now = options.clock ? () => options.clock!().toISOString() : () => store.now()
  const keyring = options.keyring ?? null
  const denied: ReadonlySet<string> = new Set(options.deniedFields ?? [])
  const queue = createAppendQueue(store, options.log ?? stderrLog, Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH), keyring)

  function recordCall(call: CallEvent): void {
    try {
      queue.enqueue({ row: callRow(call, now) })
    } catch (error) {
      queue.report(error, [{ level: 'call', action: `${call?.method} ${call?.endpoint}`, operation_id: call?.operation_id ?? null, target_id: call?.targetId ?? null }])
    }
  }

  function record(event: RunEvent): Promise<AuditEntry> {
    let row: NewRow
    try {
      row = runRow(event, now, denied)
    } catch (error) {
      return Promise.reject(error)
    }
    return new Promise<AuditEventRow>((resolve, reject) => queue.enqueue({ row, resolve, reject })).then(toEntry)
  }

  return {
    record,
    keyId: keyring?.current.id ?? null,
    async checkpoint(actor) {
      if (!keyring) throw new WarrantError('invalid_request', 'no audit key is configured (audit.key or WARRANT_AUDIT_KEY): an unsigned checkpoint would prove nothing')
      await record({ actor, action: 'audit checkpoint', summary: { key_id: keyring.current.id } })
      await queue.flush()
      const stored = await readStoredHead(db)
      if (stored.state === 'absent') throw new WarrantError('internal', 'the audit chain has no head after an append')
      // overwritten since the append: a checkpoint of it would vouch for nothing
      if (stored.state === 'unreadable') throw new WarrantError('conflict', `the audit chain's head is stored but unreadable after an append (${stored.why}): it was overwritten; run \`warrant audit verify\``)
      return signCheckpoint(stored.head, now(), keyring.current)
    },
    async acknowledge(request) {
      await queue.flush()
      return acknowledgeBreak(store, keyring, () => verifyAuditChain(db, { keyring }), now, request)
    },
    recordCall,
    callRecorder(context = {}) {
      return (call) => recordCall({ ...call, ...context })
    },
    flush: () => queue.flush(),
    verify: (opts) => verifyAuditChain(db, { ...(opts?.onProgress ? { onProgress: opts.onProgress } : {}), keyring, ...(opts?.checkpoint ? { checkpoint: opts.checkpoint } : {}) }),
    query: (filter) => queryAuditLog(db, filter),
    exportNdjson: () => exportAuditNdjson(db),
    whoAsked: (operationId) => whoAsked(store, operationId),
    recordsChanged: (operationId, opts) => recordsChanged(store, operationId, opts),
  }
}

const stderrLog: AuditLogLogger = {
  error(fields, message) {
    const err = (fields as { err?: unknown }).err
    const line = { level: 'error', msg: message, ...fields, err: err instanceof Error ? { message: err.message, code: (err as { code?: unknown }).code } : err }
    process.stderr.write(`${JSON.stringify(line)}\n`)
  },
}
