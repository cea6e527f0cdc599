import type { Actor, Filter, IncompleteReason, Continuation, Warning, Scope } from '../contract/index.js'
import type { LookalikeIds } from './lookalike-ids.js'
import type { StoredLookalikes } from './lookalike-groups.js'
import type { ExcludedPage, ExportFormat, MemberPage, SelectionView } from './schemas.js'
import type { ExportEnd } from './export.js'

/**
 * The interface other modules (plans, operations, surfaces) rely on. The implementation lives beside it
 * (`create-selection-service.ts`).
 *
 * Changes to the first version of this interface (all additive, the old calls still compile and behave):
 * - `SelectionMember.version` is `string | null`: null only for a member whose version is unknown (a
 *   compensation target whose written version was not reported). Members read from an upstream always have one.
 * - `SelectionMember.source` (the connector source it was read from, null when not read from one).
 * - `SelectionRecord` gained `completeness`, `exclusions`, `groups`, `origin`; `state` is `'frozen' | 'expired'`
 *   (expired is computed at read time from `expires_at`).
 * - `create` resolves to the `SelectionView` (was `unknown`); new: `view`, `page`, `excluded`, `exportStream`,
 *   `recover`, `createFromTargets` (for compensation plans), `assertUsable`.
 * - `reapAbandoned`; `load` of a selection still building or failed is `conflict` (409) saying so (was `not_found`).
 * - `create` takes `options.idempotencyKey` and its view says `created`.
 * - `SelectionRecord.upstream_digest`, `assertSameUpstream` (also part of `assertUsable`).
 * - `SelectionRecord.lookalike_ids` (optional), `lookalikes`.
 */

export interface ExclusionRule {
  readonly rule: string
  readonly filter: Filter
}

export interface SelectionRequest {
  readonly filter?: Filter
  readonly exclude?: readonly ExclusionRule[]
  readonly fields?: readonly string[]
  /** Walk limits for the inventory behind the selection (a stopped walk makes an incomplete selection). */
  readonly budget?: { readonly max_pages?: number; readonly max_items?: number; readonly deadline_ms?: number }
  readonly page_size?: number
}

/** One frozen member: its position, immutable id, the version it had when read, and its stored fields. */
export interface SelectionMember {
  readonly ord: number
  readonly id: string
  /** null only when the version is unknown (see the note at the top of this file). */
  readonly version: string | null
  /**
   * Every field stored for the member: the selection's review fields plus the fields the resource's actions
   * set or test and the standing approvals look at (never a denied field). A plan's before-values come from here.
   */
  readonly fields: Readonly<Record<string, unknown>>
  readonly source?: string | null
}

/** Where a selection came from, when not from a plain request. */
export type SelectionOrigin =
  | { readonly kind: 'recovery'; readonly selection_id: string }
  /** The same selector walked again as a new selection, under `deadline_ms` (see `retry`). */
  | { readonly kind: 'retry'; readonly selection_id: string; readonly deadline_ms: number }
  | { readonly kind: 'compensation'; readonly operation_id: string; readonly plan_id: string }
  /** The targets a finished operation never sent (`pending`), at the versions its plan's selection froze (see `createRemainder`). */
  | { readonly kind: 'remainder'; readonly operation_id: string; readonly plan_id: string }

/** The completeness of the inventory walk behind a selection: the envelope's fields, without items. */
export interface SelectionCompleteness {
  readonly status: 'complete' | 'partial'
  readonly truncated: boolean
  readonly incomplete_reasons: readonly IncompleteReason[]
  readonly continuation: Continuation | null
  readonly warnings: readonly Warning[]
  readonly scope: Scope
}

export interface GroupCount {
  readonly field: string
  readonly values: readonly { readonly value: unknown; readonly count: number }[]
  readonly distinct: number
  readonly complete: boolean
  readonly other_count: number
}

/** A selection as stored, parsed. */
export interface SelectionRecord {
  readonly selection_id: string
  readonly resource: string
  readonly environment: string
  readonly selector: { readonly filter: Filter; readonly exclude: readonly ExclusionRule[] }
  readonly fields: readonly string[]
  /** Fields frozen with the members that the resource denies now: stored, never served. */
  readonly withheld_fields: readonly string[]
  readonly count: number
  readonly digest: string
  readonly complete: boolean
  readonly consistent_snapshot: boolean
  readonly created_by: string | null
  readonly created_at: string
  readonly expires_at: string
  /** `frozen`, or `expired` once `expires_at` has passed (computed when read). */
  readonly state: string
  readonly completeness: SelectionCompleteness
  /** Per exclusion rule, in the selector's order: how many records it removed. */
  readonly exclusions: readonly { readonly rule: string; readonly filter: Filter; readonly count: number }[]
  readonly groups: readonly GroupCount[]
  readonly origin: SelectionOrigin | null
  /** `upstreamDigestOf` its resource when frozen: where its members were read; null for a selection frozen before it was kept. */
  readonly upstream_digest: string | null
  /** Its ids drawn alike, stored at the freeze; null (or absent) for a selection frozen before they were (0013) until first viewed. */
  readonly lookalike_ids?: StoredLookalikes | null
  /** When retention pruned its members and exclusions (0021): every read of them is refused (410, reason members_pruned). */
  readonly members_pruned_at?: string | null
}

/** One target of a compensation selection: built from an operation's ledger, not from an upstream read. */
export interface CompensationTarget {
  readonly id: string
  /** The values the operation wrote (what the record should hold now). */
  readonly after: Readonly<Record<string, unknown>>
  /** The version the record had after our write, when known; the executor then checks it. */
  readonly version?: string | null
  /** The source it was written on, which its compensation writes back alone; null or absent: by id across the sources. */
  readonly source?: string | null
}

/** One target of a remainder selection: an operation's never-sent target, as its ledger holds it. */
export interface RemainderTarget {
  /** its ord in the operation: the ord of its member in the selection the operation's plan froze */
  readonly ord: number
  readonly id: string
  /** the version it was frozen at (the operation's expected version) */
  readonly version: string | null
  readonly source: string | null
}

/** How far a selection's walk has come: upstream pages read, records examined, members frozen, records excluded. */
export interface FreezeProgress {
  readonly pages: number
  readonly examined: number
  readonly members: number
  readonly excluded: number
}

export interface SelectionService {
  /**
   * Walks the inventory, freezes members and exclusions, and returns the selection view (first page included).
   * `onProgress` hears once as the walk starts (`pages: 0`) and after each page is frozen (for a person watching a
   * long walk). `signal` stops the walk
   * (Ctrl-C in the CLI): the call rejects with its reason and the selection built so far is removed.
   * `idempotencyKey`: the same key, principal and request answer the selection the first such request froze
   * (`created: false`, nothing walked); see idempotency.ts for every case. Without one, `created` is always true.
   */
  create(
    actor: Actor,
    resource: string,
    request: SelectionRequest,
    options?: { readonly onProgress?: (progress: FreezeProgress) => void; readonly signal?: AbortSignal; readonly idempotencyKey?: string | null },
  ): Promise<SelectionView & { readonly created: boolean }>
  /** The stored selection, or `not_found`; `forbidden` when the actor's scope does not cover its resource. */
  load(actor: Actor, selectionId: string): Promise<SelectionRecord>
  /** True when the selection is past its expiry at `now` (ISO); without `now`, as loaded (at the store's now then). */
  isExpired(selection: SelectionRecord, now?: string): boolean
  /** Members with ord > afterOrd, in ord order, at most `limit`: an index seek, never an OFFSET. */
  members(selectionId: string, afterOrd: number, limit: number): Promise<readonly SelectionMember[]>
  /** Members' places and ids only, for a walk over every member that needs no field (the look-alike check). */
  memberIds(selectionId: string, afterOrd: number, limit: number): Promise<readonly { readonly ord: number; readonly id: string }[]>
  /**
   * Its ids drawn alike (stored at the freeze; walked once and stored for a selection frozen before), and the words
   * of `agentTexts` (a plan's parameters) drawn like a member's id though not it: the answer every surface renders.
   */
  lookalikes(selection: SelectionRecord, agentTexts?: readonly string[]): Promise<LookalikeIds>
  /** The view `create` returns, for a stored selection (first page of records included). */
  view(actor: Actor, selectionId: string): Promise<SelectionView>
  /** One page of members; `cursor` is a `next_cursor` from this selection's pages. */
  page(actor: Actor, selectionId: string, query: { readonly cursor?: string; readonly limit?: number }): Promise<MemberPage>
  /** One page of the records an exclusion rule removed. */
  excluded(actor: Actor, selectionId: string, query: { readonly rule: string; readonly cursor?: string; readonly limit?: number }): Promise<ExcludedPage>
  /**
   * The whole manifest, streamed page by page (memory does not grow with the selection). `onEnd` is called once when
   * the stream ends, however it ends (sent whole, cut, the client gone, or taking nothing for the stall timeout): the
   * surface writes the export's audit row there.
   */
  exportStream(actor: Actor, selectionId: string, format: ExportFormat, onEnd?: (end: ExportEnd) => Promise<void>): Promise<{ readonly stream: ReadableStream<Uint8Array>; readonly contentType: string; readonly filename: string; readonly selection: SelectionRecord }>
  /**
   * A new selection over the ids an (incomplete) selection returned: `filter: {id: {in: [...]}}`, same exclusions and
   * fields. `onProgress` and `signal` as `create`'s (its walk can be as long): the call rejects with the signal's reason
   * and the selection it was building is removed. An earlier recovery handed back (`created: false`) walks nothing, so
   * `onProgress` is never called.
   */
  recover(
    actor: Actor,
    selectionId: string,
    options?: { readonly onProgress?: (progress: FreezeProgress) => void; readonly signal?: AbortSignal },
  ): Promise<SelectionView & { readonly created: boolean }>
  /**
   * The selection's selector (filter, exclusions, fields) walked again from the start as a new selection, under
   * `deadline_ms`: how a reviewer retries an incomplete inventory. Once per selection and principal: a complete
   * retry this principal already made, still frozen and unexpired, is handed back (`created: false`, nothing walked);
   * of equal retries at the same moment one is frozen, the others handed it. An incomplete earlier retry is walked again.
   */
  retry(
    actor: Actor,
    selectionId: string,
    request: { readonly deadline_ms: number },
    options?: { readonly onProgress?: (progress: FreezeProgress) => void; readonly signal?: AbortSignal },
  ): Promise<SelectionView & { readonly created: boolean }>
  /**
   * A complete selection of exactly these targets, frozen from an operation's ledger (no upstream read):
   * ordered by id, versions as given, member fields = the values we wrote. For compensation plans.
   */
  createFromTargets(
    actor: Actor,
    resource: string,
    origin: Extract<SelectionOrigin, { kind: 'compensation' }>,
    targets: readonly CompensationTarget[],
  ): Promise<SelectionRecord>
  /**
   * A complete selection of exactly these targets of an operation, copied from the members of the selection its plan
   * froze (`from`): the same fields, the versions and sources the ledger holds (the frozen ones), nothing read from
   * the upstream. A target whose member is gone is refused (409): its values were never kept. For remainder plans.
   */
  createRemainder(
    actor: Actor,
    resource: string,
    origin: Extract<SelectionOrigin, { kind: 'remainder' }>,
    from: string,
    targets: readonly RemainderTarget[],
  ): Promise<SelectionRecord>
  /**
   * Refuses a selection a plan, an approval or a commit cannot use: `expired` (410) past its expiry,
   * `selection_incomplete` (409) when its inventory was incomplete. Without `now`, expiry as loaded (at the store's now then).
   */
  assertUsable(selection: SelectionRecord, now?: string): void
  /**
   * Refuses (409 `conflict`, `reason: 'upstream_moved'`, naming the resource) a selection whose resource's connector
   * points elsewhere than where its members were read; `assertUsable` includes it. Proposing and recovering act on
   * the members, so they call it; paging them does not.
   */
  assertSameUpstream(selection: SelectionRecord): void
  /**
   * Removes a selection its creator just froze and handed to no one, because an equal request made at the same
   * moment won (a compensation's): kept only if a plan names it.
   */
  discardUnused(selectionId: string): Promise<void>
  /**
   * Marks `failed`, with the reason, every selection whose builder is gone (killed mid-walk: its lease ended, or its
   * process of this machine no longer runs) and removes its members; returns the ids. Run at open and on a sweep.
   */
  reapAbandoned(): Promise<string[]>
}
