import type { CursorCodec } from '../inventory/index.js'
import type { Catalogue } from '../resources/index.js'
import { defaultOwner, type Store } from '../store/index.js'
import { DEFAULT_BUILD_LEASE_MS, reapAbandoned } from './build-lease.js'
import { createFromTargets } from './compensation.js'
import { createRemainder } from './remainder.js'
import type { SelectionContext } from './context.js'
import { excludedPage } from './exclusions.js'
import { load, memberIds, members } from './load.js'
import { createPageCursors } from './page-cursor.js'
import { recover } from './recovery.js'
import { retry } from './retry.js'
import { discardUnused } from './selection-row.js'
import type { SelectionService } from './selection-service.js'
import { assertSameUpstream, assertUsable, isExpired } from './usability.js'
import { DEFAULT_EXPORT_STALL_MS } from './export.js'
import { exportStream, memberPage, view } from './views.js'
import { createKeyed } from './idempotency.js'
import { lookalikesOf } from './stored-lookalikes.js'

// Re-exported so the names stay importable from this module, where they were first defined.
export { SELECTION_DEFAULT_BUDGET } from './walk.js'
export { RECOVERY_MAX_IDS, UNREACHED } from './recovery.js'
export { storedFieldsOf } from './stored-fields.js'

export interface SelectionServiceOptions {
  readonly store: Store
  readonly catalogue: Catalogue
  /** Signs page cursors and the walk's continuation. */
  readonly cursorCodec: CursorCodec
  /** Default: the store's clock. */
  readonly clock?: () => Date
  /** Default 30; a resource's `selection_ttl_minutes` overrides it. */
  readonly defaultTtlMinutes?: number
  /** Members in the first page of a view; default 100. */
  readonly firstPageSize?: number
  /** This process's lease-owner name (recorded as each selection's builder); default host:pid:random:machine. */
  readonly owner?: string
  /** A builder's lease on the selection it builds (see build-lease.ts); default 30 s. */
  readonly buildLeaseMs?: number
  /** How long an export waits for a client that reads nothing before cutting it (see export.ts); default 60 s. */
  readonly exportStallMs?: number | undefined
}

/**
 * Selections: frozen, ordered, digested sets of records, with their exclusions, groups and completeness.
 *
 * @example
 * const selections = createSelectionService({ store, catalogue, cursorCodec, defaultTtlMinutes: 30 })
 * const view = await selections.create(actor, 'subscriptions', {
 *   filter: { status: 'past_due', region: 'eu' },
 *   exclude: [{ rule: 'disputed', filter: { tags: { contains: 'disputed' } } }],
 * })
 */
export function createSelectionService(options: SelectionServiceOptions): SelectionService {
  const { store } = options
  const clock = options.clock ?? (() => new Date(store.now()))
  const ctx: SelectionContext = {
    store,
    db: store.db,
    catalogue: options.catalogue,
    cursorCodec: options.cursorCodec,
    cursors: createPageCursors(options.cursorCodec),
    clock,
    nowIso: () => clock().toISOString(),
    defaultTtlMinutes: options.defaultTtlMinutes ?? 30,
    firstPageSize: options.firstPageSize ?? 100,
    owner: options.owner ?? defaultOwner(),
    buildLeaseMs: options.buildLeaseMs ?? DEFAULT_BUILD_LEASE_MS,
    exportStallMs: options.exportStallMs ?? DEFAULT_EXPORT_STALL_MS,
    givenUp: new Map(),
  }

  return {
    create: async (actor, resourceName, request, options) => {
      const made = await createKeyed(ctx, actor, resourceName, request, options ?? {})
      return { ...(await view(ctx, actor, made.id)), created: made.created }
    },
    load: (actor, selectionId) => load(ctx, actor, selectionId),
    isExpired: (selection, now) => isExpired(selection, now),
    members: (selectionId, afterOrd, limit) => members(ctx, selectionId, afterOrd, limit),
    memberIds: (selectionId, afterOrd, limit) => memberIds(ctx, selectionId, afterOrd, limit),
    lookalikes: (selection, agentTexts) => lookalikesOf(ctx, selection, agentTexts),
    view: (actor, selectionId) => view(ctx, actor, selectionId),
    page: (actor, selectionId, query) => memberPage(ctx, actor, selectionId, query),
    excluded: (actor, selectionId, query) => excludedPage(ctx, actor, selectionId, query),
    exportStream: (actor, selectionId, format, onEnd) => exportStream(ctx, actor, selectionId, format, onEnd),
    recover: async (actor, selectionId, options) => {
      const recovery = await recover(ctx, actor, selectionId, options?.signal, options?.onProgress)
      return { ...(await view(ctx, actor, recovery.id)), created: recovery.created }
    },
    retry: async (actor, selectionId, request, options) => {
      const retried = await retry(ctx, actor, selectionId, request.deadline_ms, options?.signal, options?.onProgress)
      return { ...(await view(ctx, actor, retried.id)), created: retried.created }
    },
    createFromTargets: (actor, resourceName, origin, targets) => createFromTargets(ctx, actor, resourceName, origin, targets),
    createRemainder: (actor, resourceName, origin, from, targets) => createRemainder(ctx, actor, resourceName, origin, from, targets),
    assertUsable: (selection, now) => assertUsable(ctx, selection, now),
    assertSameUpstream: (selection) => assertSameUpstream(ctx, selection),
    discardUnused: (selectionId) => discardUnused(ctx, selectionId),
    reapAbandoned: () => reapAbandoned(ctx),
  }
}
