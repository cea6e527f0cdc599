import { matchesFilter, type Filter } from '../../src/contract/index.js'
import type {
  Connector,
  ReadByIdsResult,
  ReadPageRequest,
  ReadPageResult,
  ReadSession,
  SourceRecord,
  WriteOutcome,
  WriteRequest,
} from '../../src/connectors/connector.js'

/**
 * A model upstream for inventory tests: an in-memory, multi-source collection with MVCC versions, and a
 * connector over it whose sessions either hold a snapshot (they read as of the transaction they opened at,
 * like a repeatable-read SQL transaction) or read live (each page sees the data as it is now, like HTTP).
 *
 * The connector paginates by keyset on its declared ordering, and can misbehave on demand: cap or shorten
 * pages (even to zero items while `next` is not null), end a source with an empty page, and, through
 * `onRead`, mutate the data between pages, rate-limit, fail a source, expire a cursor, flag a page
 * incomplete, inject records, or hang.
 */

interface Version {
  readonly from: number
  to: number
  /** Position in the "updated" ordering: every write gets a new, larger one. */
  readonly seq: number
  readonly version: number
  /** null: the record was deleted by this write. */
  readonly fields: Readonly<Record<string, unknown>> | null
}

export interface ModelRow {
  readonly source: string
  readonly id: string
  readonly seq: number
  readonly version: number
  readonly fields: Readonly<Record<string, unknown>>
}

/** A multi-source collection with MVCC history. Every write is one transaction. */
export class ModelCollection {
  readonly sources: readonly string[]
  #tx = 0
  #seq = 0
  readonly #rows = new Map<string, Map<string, Version[]>>()

  constructor(sources: readonly string[]) {
    if (sources.length === 0) throw new Error('at least one source')
    this.sources = [...sources]
    for (const s of sources) this.#rows.set(s, new Map())
  }

  /** The last committed transaction: reading "at" it sees every write so far. */
  get tx(): number {
    return this.#tx
  }

  insert(source: string, id: string, fields: Record<string, unknown>): void {
    if (this.get(source, id)) throw new Error(`${source}/${id} exists`)
    const versions = this.#table(source).get(id) ?? []
    const last = versions.at(-1)
    this.#commit(source, id, { fields: { ...fields }, version: (last?.version ?? 0) + 1 })
  }

  update(source: string, id: string, patch: Record<string, unknown>): void {
    const current = this.get(source, id)
    if (!current) throw new Error(`${source}/${id} does not exist`)
    this.#commit(source, id, { fields: { ...current.fields, ...patch }, version: current.version + 1 })
  }

  remove(source: string, id: string): void {
    const current = this.get(source, id)
    if (!current) throw new Error(`${source}/${id} does not exist`)
    this.#commit(source, id, { fields: null, version: current.version + 1 })
  }

  /** The row as of transaction `at` (default: now), or undefined. */
  get(source: string, id: string, at = this.#tx): ModelRow | undefined {
    const v = this.#table(source).get(id)?.find((x) => x.from <= at && at < x.to)
    return v && v.fields ? { source, id, seq: v.seq, version: v.version, fields: v.fields } : undefined
  }

  /** Every live row of a source as of `at`, optionally filtered, in no particular order. */
  rows(source: string, at = this.#tx, filter: Filter = {}): ModelRow[] {
    const out: ModelRow[] = []
    for (const id of this.#table(source).keys()) {
      const row = this.get(source, id, at)
      if (row && matchesFilter(row.fields, filter, {})) out.push(row)
    }
    return out
  }

  /** `source/id` of every row matching the filter as of `at`, across sources. */
  keys(at = this.#tx, filter: Filter = {}): Set<string> {
    const out = new Set<string>()
    for (const source of this.sources) for (const row of this.rows(source, at, filter)) out.add(`${source}/${row.id}`)
    return out
  }

  /** Keys present (and matching) at every transaction from `from` to `to` inclusive. */
  keysPresentThroughout(from: number, to: number, filter: Filter = {}): Set<string> {
    let keys = this.keys(from, filter)
    for (let t = from + 1; t <= to; t++) {
      const now = this.keys(t, filter)
      keys = new Set([...keys].filter((k) => now.has(k)))
    }
    return keys
  }

  /** Every `source/id@version` that existed, matching the filter, at some transaction in [from, to]; `versionText` writes the version as the upstream does. */
  versionsSeen(from: number, to: number, filter: Filter = {}, versionText: (version: number) => string = (v) => `v${v}`): Set<string> {
    const out = new Set<string>()
    for (let t = from; t <= to; t++)
      for (const source of this.sources) for (const row of this.rows(source, t, filter)) out.add(`${source}/${row.id}@${versionText(row.version)}`)
    return out
  }

  #table(source: string): Map<string, Version[]> {
    const table = this.#rows.get(source)
    if (!table) throw new Error(`unknown source ${source}`)
    return table
  }

  #commit(source: string, id: string, next: { fields: Record<string, unknown> | null; version: number }): void {
    this.#tx += 1
    this.#seq += 1
    const table = this.#table(source)
    const versions = table.get(id) ?? []
    const last = versions.at(-1)
    if (last && last.to === Infinity) last.to = this.#tx
    versions.push({ from: this.#tx, to: Infinity, seq: this.#seq, version: next.version, fields: next.fields })
    table.set(id, versions)
  }
}

/** Something the upstream does instead of (or to) a normal page. */
export type ReadFault =
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number }
  | { readonly kind: 'unavailable'; readonly status?: number }
  | { readonly kind: 'cursor_expired' }
  /** Serve the page, flagged as cut short by the upstream; `stop` also ends the source (`next: null`). */
  | { readonly kind: 'incomplete'; readonly code: 'RESULT_LIMIT_REACHED' | 'TIME_BUDGET_EXCEEDED'; readonly limit?: number; readonly stop?: boolean }
  /** Serve the page with these records in front (an upstream that repeats itself). */
  | { readonly kind: 'extra'; readonly records: readonly SourceRecord[] }
  /** Wait, then serve the page. `ignoreAbort`: an upstream client that does not honour the abort signal. */
  | { readonly kind: 'delay'; readonly ms: number; readonly ignoreAbort?: boolean }
  /** Throw from readPage (a connector bug or a transport error that escaped). */
  | { readonly kind: 'throw'; readonly message: string }

export interface ReadContext {
  readonly source: string
  readonly position: string | null
  readonly pageSize: number
  /** Reads so far through this connector, all sessions (0 for the first). */
  readonly readIndex: number
  /** Reads so far in this session. */
  readonly sessionReadIndex: number
  readonly session: SessionInfo
  readonly collection: ModelCollection
}

export interface SessionInfo {
  readonly id: number
  /** The transaction a snapshot session reads at; for a live session, the one it opened at. */
  readonly openedAt: number
  closedAt: number | null
  readonly snapshot: string | null
}

export interface ModelConnectorOptions {
  readonly collection: ModelCollection
  /** true: each session reads one snapshot (as of its opening). false: live reads, no snapshot. */
  readonly snapshots: boolean
  /** 'id' (immutable key) or 'updated' (every write moves the record to the end). Default 'id'. */
  readonly ordering?: 'id' | 'updated'
  /** The upstream's own maximum page size. */
  readonly pageCap?: number
  /** Per read (cycling over the connector's read count): at most this many items, even 0, whatever was asked. */
  readonly shortPages?: readonly number[]
  /** Serve `pageCap` items whatever size was asked (an upstream that ignores the page size parameter). */
  readonly ignoreRequestedSize?: boolean
  /** A page that takes the last items still says `next` ≠ null; the following page is empty with `next: null`. */
  readonly lazyEnd?: boolean
  /** Called before each page is served: mutate the collection, or return a fault. */
  readonly onRead?: (ctx: ReadContext) => ReadFault | void | Promise<ReadFault | void>
  /** Make openSession fail. */
  readonly failOpen?: boolean
  /** What the sessions say their positions survive (absent: not said, i.e. opaque). */
  readonly positions?: 'keyset' | 'checked' | 'opaque'
}

export interface ModelConnector extends Connector {
  readonly sessions: readonly SessionInfo[]
  /** Every readPage call: source, position, the size asked, and whether the signal was aborted by the end. */
  readonly reads: readonly { source: string; position: string | null; pageSize: number; signal?: AbortSignal }[]
}

type Key = readonly [number, string] | readonly [string]

export function createModelConnector(options: ModelConnectorOptions): ModelConnector {
  const { collection } = options
  const ordering = options.ordering ?? 'id'
  const sessions: SessionInfo[] = []
  const reads: { source: string; position: string | null; pageSize: number; signal?: AbortSignal }[] = []
  let readCount = 0

  const keyOf = (row: ModelRow): Key => (ordering === 'id' ? [row.id] : [row.seq, row.id])
  const compare = (a: Key, b: Key): number => {
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!
      const y = b[i]!
      if (x < y) return -1
      if (x > y) return 1
    }
    return 0
  }
  const encode = (key: Key | null): string => Buffer.from(JSON.stringify({ after: key })).toString('base64url')
  const decode = (position: string | null): Key | null =>
    position === null ? null : (JSON.parse(Buffer.from(position, 'base64url').toString('utf8')) as { after: Key | null }).after
  const toRecord = (row: ModelRow): SourceRecord => ({ id: row.id, version: `v${row.version}`, fields: { ...row.fields } })

  return {
    // several sources answering statuses (429, 503): an HTTP upstream's faults; a sql connector's codes are its own
    // classification, which the walk never reports as an upstream's answer (walkInventory)
    kind: 'http',
    sources: collection.sources,
    ordering: ordering === 'id' ? 'id ascending' : 'updated ascending, id ascending',
    sessions,
    reads,

    async openSession(): Promise<ReadSession> {
      if (options.failOpen) throw new Error('connection refused')
      const info: SessionInfo = {
        id: sessions.length + 1,
        openedAt: collection.tx,
        closedAt: null,
        snapshot: options.snapshots ? `tx:${collection.tx}` : null,
      }
      sessions.push(info)
      let sessionReads = 0
      return {
        consistentSnapshot: options.snapshots,
        ...(options.positions === undefined ? {} : { positions: options.positions }),
        snapshot: info.snapshot,
        async readPage(request: ReadPageRequest): Promise<ReadPageResult> {
          if (info.closedAt !== null) throw new Error('read on a closed session')
          reads.push({ source: request.source, position: request.position, pageSize: request.pageSize, ...(request.signal ? { signal: request.signal } : {}) })
          const ctx: ReadContext = {
            source: request.source,
            position: request.position,
            pageSize: request.pageSize,
            readIndex: readCount++,
            sessionReadIndex: sessionReads++,
            session: info,
            collection,
          }
          const fault = (await options.onRead?.(ctx)) ?? undefined
          if (fault?.kind === 'rate_limited') return { kind: 'rate_limited', retryAfterSeconds: fault.retryAfterSeconds, message: '429 Too Many Requests' }
          if (fault?.kind === 'unavailable') return { kind: 'unavailable', message: `${request.source} is down`, ...(fault.status === undefined ? {} : { status: fault.status }) }
          if (fault?.kind === 'cursor_expired') return { kind: 'cursor_expired', message: 'upstream cursor expired' }
          if (fault?.kind === 'throw') throw new Error(fault.message)
          if (fault?.kind === 'delay') await sleep(fault.ms, fault.ignoreAbort ? undefined : request.signal)

          const at = options.snapshots ? info.openedAt : collection.tx
          const after = decode(request.position)
          const rows = collection
            .rows(request.source, at, request.filter)
            .map((row) => ({ row, key: keyOf(row) }))
            .filter((x) => after === null || compare(x.key, after) > 0)
            .sort((a, b) => compare(a.key, b.key))
          let n = options.ignoreRequestedSize ? (options.pageCap ?? request.pageSize) : Math.min(request.pageSize, options.pageCap ?? Infinity)
          if (options.shortPages && options.shortPages.length > 0) n = Math.min(n, options.shortPages[ctx.readIndex % options.shortPages.length]!)
          const taken = rows.slice(0, n)
          const lastKey = taken.at(-1)?.key ?? after
          let next: string | null
          if (taken.length < rows.length) next = encode(lastKey)
          else next = options.lazyEnd && taken.length > 0 ? encode(lastKey) : null

          const items = taken.map((x) => toRecord(x.row))
          if (fault?.kind === 'extra') items.unshift(...fault.records)
          if (fault?.kind === 'incomplete')
            return {
              kind: 'page',
              items,
              next: fault.stop ? null : next,
              upstreamIncomplete: { code: fault.code, ...(fault.limit === undefined ? {} : { limit: fault.limit }) },
            }
          return { kind: 'page', items, next }
        },
        async close() {
          info.closedAt = collection.tx
        },
      }
    },

    async readByIds(ids: readonly string[]): Promise<ReadByIdsResult> {
      const records = new Map<string, SourceRecord>()
      const missing: string[] = []
      for (const id of ids) {
        const row = collection.sources.map((s) => collection.get(s, id)).find((r) => r !== undefined)
        if (row) records.set(id, toRecord(row))
        else missing.push(id)
      }
      return { records, missing, failed: [] }
    },

    async write(request: WriteRequest): Promise<WriteOutcome> {
      const source = collection.sources.find((s) => collection.get(s, request.id))
      const row = source === undefined ? undefined : collection.get(source, request.id)
      if (!source || !row) return { kind: 'conflict', reason: 'missing', message: 'no such record' }
      if (`v${row.version}` !== request.expectedVersion) return { kind: 'conflict', reason: 'version_changed', message: 'version changed' }
      if (!matchesFilter(row.fields, request.precondition, {})) return { kind: 'conflict', reason: 'precondition_failed', message: 'precondition failed' }
      collection.update(source, request.id, { ...request.set })
      const after = collection.get(source, request.id)
      return { kind: 'written', status: 200, record: after ? toRecord(after) : null }
    },

    async close() {},
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Fills a collection: `count` records per source, ids zero-padded so string order is numeric order. */
export function seedCollection(
  sources: readonly string[],
  count: number | readonly number[],
  fieldsOf: (source: string, i: number) => Record<string, unknown> = (_s, i) => ({ n: i, status: i % 3 === 0 ? 'past_due' : 'active' }),
): ModelCollection {
  const collection = new ModelCollection(sources)
  sources.forEach((source, s) => {
    const n = typeof count === 'number' ? count : (count[s] ?? 0)
    for (let i = 0; i < n; i++) collection.insert(source, idOf(i), fieldsOf(source, i))
  })
  return collection
}

export function idOf(i: number): string {
  return `r${String(i).padStart(5, '0')}`
}

/** `source/id` of each returned item, to compare with `ModelCollection.keys()`. */
export function keysOf(items: readonly { source: string; id: string }[]): string[] {
  return items.map((i) => `${i.source}/${i.id}`)
}
