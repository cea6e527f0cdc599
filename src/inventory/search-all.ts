import type { Envelope } from '../contract/index.js'
import type { Connector } from '../connectors/connector.js'
import type { Budget, SearchOptions, SearchQuery, WalkedRecord } from './search-types.js'
import { walkInventory } from './walk-inventory.js'

// This module was once the whole walk; what it exported still resolves from here, so imports of it keep working.
export { queryFingerprint } from './query-fingerprint.js'
export { memorySeenFilter, type SeenFilter } from './seen-filter.js'
export { walkInventory, type WalkOptions } from './walk-inventory.js'
export {
  DEFAULT_BUDGET,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  MAX_CURSOR_CHARS,
  type Budget,
  type SearchOptions,
  type SearchQuery,
  type SearchScope,
  type WalkedRecord,
  type WalkSummary,
} from './search-types.js'

/**
 * `searchAll`: walk every source of a connector to a terminal state, within the caller's budgets, and say as
 * data whether the walk covered the whole scope, what it left out, why, and how to continue.
 *
 * Walks every source of the connector, in declared order, in one read session, to a terminal state or a
 * budget, and returns the envelope. Never throws for an upstream's partial answer (those are reasons); throws
 * `WarrantError` for a bad query or cursor (`invalid_request`, `invalid_cursor`) and when no session can be
 * opened at all (`upstream_unavailable`).
 *
 * It keeps every item in memory; for walks too large for that (a selection of millions of members) use
 * `walkInventory`, which this is built on.
 *
 * @example
 * const result = await searchAll(connector, { resource: 'subscriptions', filter: { status: 'past_due' } },
 *   { maxPages: 50, deadlineMs: 10_000 }, { scope, cursorCodec })
 * if (!result.complete) show(result.incomplete_reasons)
 */
export async function searchAll(
  connector: Connector,
  query: SearchQuery,
  budget: Budget,
  options: SearchOptions,
): Promise<Envelope<WalkedRecord>> {
  const items: WalkedRecord[] = []
  const summary = await walkInventory(connector, query, budget, options, (page) => {
    for (const item of page) items.push(item)
  })
  const { status, ...rest } = summary
  return { status, items, ...rest }
}
