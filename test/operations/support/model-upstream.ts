import { matchesFilter, WarrantError } from '../../../src/contract/index.js'
import type { Connector, ReadByIdsResult, SourceRecord, WriteOutcome, WriteRequest, WriteThrew } from '../../../src/connectors/connector.js'

/** What the model upstream does with one write call. */
export type WriteBehaviour =
  | 'success'
  /** applies the write but answers with another value for the approved field (role "admin" for "viewer") */
  | 'contradict'
  /** another writer's change lands first (a new version), and the write is refused 412 for it */
  | 'conflict'
  /** refused 412 with the record as it was read (a lock of the upstream's own, a weak ETag compared strongly) */
  | 'refused'
  | 'rejected'
  | 'unauthorized'
  /** applies the write, then answers nothing durable */
  | 'unknown_applied'
  /** does not apply the write, and answers nothing durable */
  | 'unknown'
  | 'rate_limited'
  /** applies the write and answers 204 with no body (the executor re-reads to check the effect) */
  | 'empty'
  /** applies another role than approved and answers 204 with no body */
  | 'empty_contradict'
  /** throws `invalid_request` before anything is sent, as a connector refusing the request itself does */
  | 'throws_refused'

interface Row {
  version: number
  fields: Record<string, unknown>
}

/**
 * An in-memory upstream with versions and a connector over it whose write outcomes are scripted per id and
 * per call. It counts what reached it: every write call, and every write it applied.
 */
export class ModelUpstream {
  readonly rows = new Map<string, Row>()
  /** write calls per id (any answer) */
  readonly calls = new Map<string, number>()
  /** writes applied per id */
  readonly applied = new Map<string, number>()
  /** ids in the order their (non-429) write calls arrived */
  readonly order: string[] = []
  readonly reads: string[][] = []
  /** the ids of each window written through `writeWindow` */
  readonly windows: string[][] = []
  /** for each `refreshFacts` call, how many write calls had arrived before it */
  readonly refreshes: number[] = []
  behaviour: (id: string, call: number) => WriteBehaviour = () => 'success'
  retryAfterSeconds = 0
  /** ms each write takes */
  writeDelayMs = 0
  /** awaited as each write call arrives, before anything else (to look at the ledger at that moment) */
  onWrite: ((id: string) => Promise<void> | void) | null = null
  /** called before each readByIds (to change the data between batches) */
  onRead: ((ids: readonly string[], readCount: number) => void) | null = null

  constructor(ids: readonly string[], fields: (id: string, i: number) => Record<string, unknown>) {
    ids.forEach((id, i) => this.rows.set(id, { version: 1, fields: { id, ...fields(id, i) } }))
  }

  update(id: string, patch: Record<string, unknown>): void {
    const row = this.rows.get(id)!
    row.fields = { ...row.fields, ...patch }
    row.version += 1
  }

  /**
   * `windowed`: the connector says its write enforces the version (as the sql connector's does) and answers a
   * window of writes (`writeWindow`) target by target, each as `write` would: the executor then runs its
   * window loop.
   */
  connector(options: { readonly consistentSnapshot?: boolean; readonly windowed?: boolean } = {}): Connector {
    const record = (id: string, row: Row): SourceRecord => ({ id, version: String(row.version), fields: { ...row.fields } })
    const connector: Connector = {
      kind: 'sql',
      sources: ['model'],
      ordering: 'id ascending',
      openSession: async () => ({
        consistentSnapshot: options.consistentSnapshot ?? true,
        snapshot: null,
        readPage: async () => ({ kind: 'page', items: [], next: null }),
        close: async () => undefined,
      }),
      readByIds: async (ids): Promise<ReadByIdsResult> => {
        this.onRead?.(ids, this.reads.length)
        this.reads.push([...ids])
        const records = new Map<string, SourceRecord>()
        const missing: string[] = []
        for (const id of ids) {
          const row = this.rows.get(id)
          if (row) records.set(id, record(id, row))
          else missing.push(id)
        }
        return { records, missing, failed: [] }
      },
      write: async (request: WriteRequest): Promise<WriteOutcome> => {
        await this.onWrite?.(request.id)
        const call = (this.calls.get(request.id) ?? 0) + 1
        this.calls.set(request.id, call)
        if (this.writeDelayMs > 0) await new Promise((r) => setTimeout(r, this.writeDelayMs))
        const behaviour = this.behaviour(request.id, call)
        if (behaviour === 'throws_refused') throw new WarrantError('invalid_request', `the write of "${request.id}" cannot be made as approved`)
        if (behaviour === 'rate_limited') return { kind: 'rate_limited', status: 429, retryAfterSeconds: this.retryAfterSeconds, message: 'slow down' }
        this.order.push(request.id)
        const row = this.rows.get(request.id)
        if (!row) return { kind: 'conflict', reason: 'missing', message: 'gone' }
        if (behaviour === 'conflict') this.update(request.id, { name: 'changed by another writer' })
        if (String(row.version) !== request.expectedVersion || !matchesFilter(row.fields, request.precondition, {}) || behaviour === 'conflict' || behaviour === 'refused')
          return { kind: 'conflict', reason: 'version_changed', status: 412, message: 'precondition failed upstream' }
        if (behaviour === 'rejected') return { kind: 'rejected', status: 422, message: 'invalid value' }
        if (behaviour === 'unauthorized') return { kind: 'unauthorized', status: 403, message: 'forbidden' }
        if (behaviour === 'unknown') return { kind: 'unknown', message: 'connection reset' }
        row.fields = { ...row.fields, ...request.set, ...(behaviour === 'empty_contradict' ? { role: 'admin' } : {}) }
        row.version += 1
        this.applied.set(request.id, (this.applied.get(request.id) ?? 0) + 1)
        if (behaviour === 'unknown_applied') return { kind: 'unknown', status: 504, message: 'gateway timeout' }
        if (behaviour === 'empty' || behaviour === 'empty_contradict') return { kind: 'written', status: 204, record: null }
        const answer = record(request.id, row)
        if (behaviour === 'contradict') return { kind: 'written', status: 200, record: { ...answer, fields: { ...answer.fields, role: 'admin' } } }
        return { kind: 'written', status: 200, record: answer }
      },
      refreshFacts: async () => void this.refreshes.push(this.order.length),
      close: async () => undefined,
    }
    if (!options.windowed) return connector
    return {
      ...connector,
      writeEnforcesVersion: true,
      writeWindow: async (requests) => {
        this.windows.push(requests.map((r) => r.id))
        // each answer its own, as the sql connector's: a request whose write throws is that request's error alone
        const outcomes: (WriteOutcome | WriteThrew)[] = []
        for (const request of requests) outcomes.push(await connector.write(request).catch((error: unknown) => ({ kind: 'threw' as const, error })))
        return outcomes
      },
    }
  }
}
