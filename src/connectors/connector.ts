import type { Filter } from '../contract/index.js'
import type { FieldTypeMisfit, NumberColumn, StringColumn } from './column-keeping.js'

/** Rows a walk left out because their id column is NULL: no change could address them. */
export interface IdlessRows {
  readonly field: string
  readonly count: number
}

/**
 * Records a walk left out because they carry no version to freeze: an ETag-versioned list (`version.from: etag`)
 * whose items have no ETag, or a version field null or empty. `field`: the version field; absent for an
 * ETag. A selection frozen with an empty version would be judged "changed" against every version read later.
 */
export interface VersionlessRecords {
  readonly field?: string
  readonly count: number
}

/** One upstream record as the gateway sees it: an immutable id, its version when read, and its fields. */
export interface SourceRecord {
  readonly id: string
  readonly version: string
  readonly fields: Readonly<Record<string, unknown>>
  /**
   * The whole object the upstream sent for this record (read by id), undeclared and denied fields included.
   * Held in memory for the write path only (a replacing write sends it back; the check after a write compares
   * it); never stored, logged or returned.
   */
  readonly representation?: unknown
  /**
   * The representation holds a number its JSON parser rounded (a 64-bit integer, a decimal of more than 15
   * significant digits): sent back whole, it would change that value upstream, so a replacing write refuses it.
   */
  readonly representationRounded?: boolean
}

/** A request for one page of one source. `position` is the connector's own opaque position, null to start. */
export interface ReadPageRequest {
  readonly source: string
  readonly filter: Filter
  readonly position: string | null
  readonly pageSize: number
  readonly signal?: AbortSignal
}

/**
 * What one page read returned, with the upstream's own completeness facts. Failures are results, not
 * exceptions: the inventory turns each into a reason code.
 */
export type ReadPageResult =
  | {
      readonly kind: 'page'
      readonly items: readonly SourceRecord[]
      /** Where the next page starts; null only when the upstream says this source is exhausted. */
      readonly next: string | null
      /** The upstream cut this page short by its own limit or time budget (e.g. `incomplete_results: true`). */
      readonly upstreamIncomplete?: {
        readonly code: 'RESULT_LIMIT_REACHED' | 'TIME_BUDGET_EXCEEDED' | 'SOURCE_UNAVAILABLE'
        readonly limit?: number
        /** What the upstream said, e.g. "2 of 5 shards failed". */
        readonly message?: string
      }
      /** The number of matches of this very query, when the upstream gave one that counts exactly that. */
      readonly total?: number
      /** Where `total` was read, as the config names it (`total_path "meta.count"`): what a reason blames when the total cannot count the list. */
      readonly totalFrom?: string
      /**
       * The records the upstream sent on this page, before Warrant re-checked them against the filter and the declared
       * fields: what its `total` counts (an upstream that ignores a filter counts what it sends, not what matches).
       * Absent: `items.length`.
       */
      readonly received?: number
      /**
       * The upstream's total as it gave it, and what it counts as the config declares (`list.total_kind`):
       * the matches of the query sent upstream, or the whole collection. A collection-wide total never
       * proves a filtered walk.
       */
      readonly upstreamTotal?: { readonly count: number; readonly kind: 'filtered' | 'collection' }
      /**
       * Records of this page that could not be judged against the declared fields (a field absent or of
       * another type, no usable id or version): never in `items`, never silently gone.
       */
      readonly unjudged?: {
        readonly count: number
        readonly absent: readonly string[]
        readonly mistyped: readonly string[]
        /** of `count`: rows with no id at all (a NULL id column), which name no record */
        readonly idless?: IdlessRows
        /** of `count`: records with no version to freeze */
        readonly versionless?: VersionlessRecords
      }
      /** On a `checked` session: this page's start could not be checked against the previous page's last record. */
      readonly unchecked?: boolean
    }
  /** `retryAfterSeconds`: the wait the upstream named; absent when it named none usable (the walk then backs off on its own) */
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds?: number; readonly message: string }
  /** A failure that may clear with time (no answer, a timeout, a 5xx): the same request can be tried again later. */
  | { readonly kind: 'unavailable'; readonly message: string; readonly status?: number; readonly retryAfterSeconds?: number }
  /** A permanent failure: the same request would fail the same way (a 4xx, a redirect, an answer of the wrong shape). */
  /** `configKey`: the config line that misreads the upstream, where one is to blame (`connector.list.total_path`). */
  | { readonly kind: 'refused'; readonly message: string; readonly status?: number; readonly configKey?: string }
  /** The credential may not read this source (401, 403): part of the scope is outside its visibility. */
  | { readonly kind: 'forbidden'; readonly message: string; readonly status?: number }
  /** The upstream will not go further for this query (a result cap, or an empty page while its total says more remain). */
  | { readonly kind: 'result_limit'; readonly message: string; readonly status?: number; readonly limit?: number }
  /** The data moved under the walk: the previous page's last record is no longer where it was. */
  | { readonly kind: 'moved'; readonly message: string }
  | { readonly kind: 'cursor_expired'; readonly message: string }

/**
 * A walk's read session. SQL holds one read transaction for the session, so every page sees one snapshot;
 * HTTP has none and says so.
 */
export interface ReadSession {
  readonly consistentSnapshot: boolean
  /**
   * What a position means when the data moves between pages. `keyset`: a page starts strictly after the last key
   * read, in a unique order, so no record that existed the whole time can be skipped or read twice. `checked`: the
   * connector re-reads the previous page's last record with each page and answers `moved` when it is not in
   * place. `opaque` (the default): neither; a walk over it cannot prove the data held still.
   */
  readonly positions?: 'keyset' | 'checked' | 'opaque'
  /** An identifier or upper bound of the snapshot, when there is one. */
  readonly snapshot: string | null
  readPage(request: ReadPageRequest): Promise<ReadPageResult>
  close(): Promise<void>
}

/** Records read by id, with those that do not exist and the sources that failed. */
export interface ReadByIdsResult {
  readonly records: ReadonlyMap<string, SourceRecord>
  readonly missing: readonly string[]
  /**
   * `retryAfterSeconds`: a 429's `Retry-After` (or a 503's: the same "come back then"), which a caller reading again honours.
   * `heldBy`: an id read across the sources that several of them hold (the sources, in config order): no upstream
   * failed, the id alone names no one record; naming the source reads it.
   */
  readonly failed: readonly {
    readonly id: string
    readonly message: string
    readonly status?: number
    readonly retryAfterSeconds?: number
    readonly heldBy?: readonly string[]
    /**
     * The id itself names no record here, whatever the upstream holds: the id column's type cannot be it ("abc" for a
     * uuid or integer column), or the engine matched it to a row stored under another spelling. The asker's id is at
     * fault, not the upstream; it is still not proven absent.
     */
    readonly idRefused?: true
  }[]
  /** The source each record of `records` was read from, where the connector has several (http); a sql connector's is its one. */
  readonly sources?: ReadonlyMap<string, string>
}

/** One conditional write: change `set` on `id` only if it still has `expectedVersion` and meets `precondition`. */
export interface WriteRequest {
  readonly id: string
  /**
   * The source the record was frozen from (a selection member's): the write goes there alone, and a source the
   * resource no longer declares refuses it unsent. Absent (a member frozen without one), the sources are tried by id.
   */
  readonly source?: string
  readonly expectedVersion: string
  readonly set: Readonly<Record<string, unknown>>
  /**
   * The values this write puts back as the record held them before an operation (a compensation's recorded
   * before-values, set by the executor for those writes alone): a set value equal to its entry here is not judged
   * against the declared type or the column's type, since the column held it; the engine still takes or refuses it,
   * and the answer is judged as any write's. Absent: every set value is judged.
   */
  readonly restores?: Readonly<Record<string, unknown>>
  readonly precondition: Filter
  /** For HTTP: the declared method, path and body, already rendered from templates by the caller. */
  readonly http?: HttpWrite
  /**
   * The record as re-read just before this write (its version is the one sent). A replacing write needs it:
   * its body is this representation with the set fields applied.
   */
  readonly current?: SourceRecord
  /** The plan's exempt paths (set, version, `write.may_change`): sql refuses a change outside them to `current` before COMMIT (untouched-fields.ts). */
  readonly mayChange?: readonly string[]
  readonly signal?: AbortSignal
}

/** A rendered http write. Without `style` it is a `patch`; without `version`, `ifMatch` says header or none. */
export interface HttpWrite {
  readonly method: string
  readonly path: string
  readonly body?: unknown
  readonly ifMatch: boolean
  readonly style?: 'patch' | 'replace' | 'action'
  readonly version?: { readonly in: 'header'; readonly name: string } | { readonly in: 'body'; readonly path: string } | { readonly in: 'query'; readonly param: string } | { readonly in: 'none' }
  /** Where the answer carries the new version. */
  readonly newVersion?: { readonly from: 'body'; readonly path: string } | { readonly from: 'header'; readonly name: string }
}

/** How a write ended. `unknown` means no durable answer: the write may or may not have happened. */
export type WriteOutcome =
  | {
      readonly kind: 'written'
      readonly status: number
      /** The target record, when the answer carries it (same id). */
      readonly record: SourceRecord | null
      readonly body?: unknown
      /** The answer is a record, but another one: its id. The write's effect is contradicted. */
      readonly otherRecordId?: string
      /** The new version as the answer states it (`write.new_version`), when configured and present. */
      readonly newVersion?: string
      /** A 2xx whose body says at its top level that the request failed (`ok: false`, `errors`): what it says (see http `errorInBody`). */
      readonly failureInBody?: string
    }
  | { readonly kind: 'conflict'; readonly reason: 'version_changed' | 'precondition_failed' | 'missing'; readonly status?: number; readonly message: string }
  | { readonly kind: 'rejected'; readonly status: number; readonly message: string; readonly body?: unknown }
  /**
   * The request provably never left the gateway: no connection was made (refused, a name that does not
   * resolve, a TLS handshake that failed or a handshake unfinished at the time limit; for SQL a connection
   * that could not be opened), so not one byte of it was written. The record is unchanged by it.
   * Only where the client can tell: a kept-alive connection that breaks may have carried it (`unknown`).
   */
  | { readonly kind: 'not_sent'; readonly message: string }
  /**
   * The write was sent inside a transaction that was never committed: the connection was lost (or the write
   * stopped) after the statement and before COMMIT was sent, so the database rolled it back. Nothing was written;
   * it failed to reach a commit, not a validation. A connection lost during COMMIT itself is `unknown`.
   */
  | { readonly kind: 'rolled_back'; readonly message: string }
  | { readonly kind: 'unauthorized'; readonly status: number; readonly message: string }
  /**
   * `defaulted`: the upstream named no usable wait (no Retry-After, or one that is neither seconds nor an
   * HTTP-date); `retryAfterSeconds` is then the connector's default, which the executor caps at its bound.
   * `notApplied`: the upstream proved the write was not applied (a database that rolled its statement back for a
   * lock before any COMMIT was sent), so a halt before its retry leaves the target pending, never unknown.
   */
  | { readonly kind: 'rate_limited'; readonly status: number; readonly retryAfterSeconds: number; readonly message: string; readonly defaulted?: true; readonly notApplied?: true }
  | {
      readonly kind: 'unknown'
      readonly message: string
      readonly status?: number
      /**
       * The upstream took the write to apply it later (HTTP 202 Accepted): it will likely land, but the answer
       * says nothing of its effect; only the record, read once the upstream applied it, can tell.
       */
      readonly accepted?: true
    }

/**
 * A request of a window (`writeWindow`) whose own step threw after other requests of the window were sent: that
 * request's answer alone, as `write` throwing would be its answer written alone (a `WarrantError`
 * `invalid_request` refused it before it was sent; anything else may have reached the upstream). The window's
 * other requests keep their own answers: a statement that committed for them still did.
 */
export interface WriteThrew {
  readonly kind: 'threw'
  readonly error: unknown
}

/** Something that happened upstream, for the call-level audit log. Never carries credentials. */
export interface UpstreamCall {
  readonly source: string
  readonly method: string
  /** The endpoint as a template (`/subscriptions/{id}`) or a SQL statement kind, never a secret. */
  readonly endpoint: string
  readonly targetId?: string
  readonly status: number | null
  readonly outcome: string
  readonly durationMs: number
  /**
   * The statement wrote this many targets at once (`writeWindow`); each gets its own call with its own outcome
   * and the statement's duration.
   */
  readonly window?: number
  /** A read of several records by id in one request: how many ids it asked for. */
  readonly ids?: number
}

/**
 * The gateway's view of one resource's upstream: read a page, read by id, one conditional write.
 * Credentials stay inside the connector; nothing it returns carries them.
 */
export interface Connector {
  readonly kind: 'sql' | 'http'
  /** The sources this resource federates (shards, tenants, regions); at least one. */
  readonly sources: readonly string[]
  /** The deterministic order pages come in, e.g. "id ascending". */
  readonly ordering: string
  /**
   * True when a position names a page number, which means other records at another page size (page 3 of 100 is
   * not page 3 of 200): every page of a walk, its continuations included, must then be asked at one size, or
   * records are skipped or read twice. Absent or false: a position holds wherever the next page starts (a record
   * count, a key, an upstream cursor), and the size may change from page to page.
   */
  readonly sizedPositions?: boolean
  openSession(): Promise<ReadSession>
  /**
   * `sourceOf`: the source each id was frozen from (a selection member's), where known: that id is read from it
   * alone, since (source, id) is its address; an id whose source the resource no longer declares fails, naming it.
   * An id without one is read by id across the sources. A connector of one source (sql) reads every id there.
   */
  readByIds(ids: readonly string[], signal?: AbortSignal, sourceOf?: ReadonlyMap<string, string>): Promise<ReadByIdsResult>
  /**
   * True when `write` itself refuses a record whose version is not `expectedVersion` (and that fails the
   * precondition) in the same statement, e.g. `UPDATE … WHERE id = ? AND version = ?`: a record read a moment
   * earlier with others is then as good as one re-read alone, since a change in between makes the write a
   * conflict. Absent or false, each target is re-read just before its write.
   */
  readonly writeEnforcesVersion?: boolean
  write(request: WriteRequest): Promise<WriteOutcome>
  /**
   * Several conditional writes sent as one statement, each judged as `write` would judge it alone: the outcome
   * at index i is request i's. Every request sets the same values under the same precondition (the caller
   * groups them); each record is still written only at its own expected version. Once anything was sent, it never
   * throws: a request whose own step then throws is `WriteThrew` at its index, the others' answers stand. Absent where the upstream
   * cannot do this atomically per record (HTTP, MySQL): the caller then writes one target at a time.
   *
   * @example
   * const outcomes = await connector.writeWindow?.(targets.map((t) => ({ id: t.id, expectedVersion: t.version, set: { plan: 'pro' }, precondition: {} })))
   */
  writeWindow?(requests: readonly WriteRequest[]): Promise<readonly (WriteOutcome | WriteThrew)[]>
  /**
   * How many targets one `writeWindow` call should carry, where the resource says (a sql resource's
   * `write_window`); absent, the executor's window is the execution's concurrency.
   */
  readonly writeWindowSize?: number
  /**
   * Reads again what the upstream's catalogue says of the resource (its column types, triggers, engine, keys),
   * so what follows is judged on the catalogue as it is now, not as it was at first use. The executor calls it
   * as an operation's run starts. Absent where the upstream has no catalogue (HTTP).
   */
  refreshFacts?(): Promise<void>
  /**
   * The declared fields the upstream stores as something else than declared, each with why no filter on it can be
   * trusted (a number field in a text column compares as text); null where this cannot be read (the upstream
   * is down, or keeps no types). Absent where the upstream has no column types (HTTP).
   */
  fieldTypeMisfits?(): Promise<readonly FieldTypeMisfit[] | null>
  /** The string fields over columns of numbers or booleans, and which strings each keeps as written; null where unread. Absent without column types (HTTP). */
  stringColumns?(): Promise<readonly StringColumn[] | null>
  /** The number fields over columns of integers or fixed-point decimals, and which numbers each keeps exactly; null where unread. Absent without column types (HTTP). */
  numberColumns?(): Promise<readonly NumberColumn[] | null>
  /**
   * Why the upstream's version column cannot move on every write (a timestamp column keeping whole seconds), so
   * every write is refused, with the fix; null when it can, or where this cannot be read. Absent where the
   * upstream has no column types (HTTP).
   */
  versionColumnProblem?(): Promise<string | null>
  /**
   * Declared fields over a column the table moves itself on every UPDATE (MySQL/MariaDB `ON UPDATE
   * CURRENT_TIMESTAMP`), which a write of an action that neither sets it nor lists it in `write.may_change` changes
   * unapproved; null where the catalogue cannot be read. Absent where the upstream has no catalogue (HTTP).
   */
  fieldsMovedOnUpdate?(): Promise<readonly string[] | null>
  /** Digits of a second the version column keeps (a timestamp column), null for any other or where unread; absent on HTTP. */
  versionSecondDigits?(): Promise<number | null>
  /**
   * What the upstream's table as a whole keeps Warrant from promising (its engine, its key, its id column), each
   * with what the connector does about it and the fix; empty when nothing, null where the catalogue cannot be
   * read. Absent where the upstream has no catalogue (HTTP).
   */
  tableProblems?(): Promise<readonly TableProblem[] | null>
  close(): Promise<void>
}

/** Something the table's catalogue says, and what the connector does about it. */
export interface TableProblem {
  /**
   * What it costs. `writes`: every write is refused before it is sent (an engine without transactions).
   * `reads`: every read, read by id and write is refused (an id column that cannot name its rows).
   * `walks`: nothing is refused up front; each walk checks its pages and is refused where an id comes twice
   * (an id column no key proves unique: a view or a table without a key works while its ids are unique).
   */
  readonly affects: 'writes' | 'reads' | 'walks'
  /** What the catalogue says, what it means, and the fix. */
  readonly message: string
  /** The resource's config lines that can fix it (`id_field`); none where only the database can (its engine). */
  readonly configKeys: readonly string[]
}

/** Receives each upstream call; the audit module subscribes. */
export type UpstreamCallListener = (call: UpstreamCall) => void
