import { digestOf } from '../contract/index.js'
import type { SearchQuery } from './search-types.js'

/**
 * The identity of a query, which a cursor is bound to: resource, environment, filter and field set. Key order
 * in the filter and the order of `fields` do not matter; the page size does not count (changing it while
 * resuming is harmless), nor does the cursor itself.
 *
 * @example queryFingerprint({ resource: 'subscriptions', filter: { status: 'past_due' } }, 'billing-prod')
 */
export function queryFingerprint(
  query: Pick<SearchQuery, 'resource' | 'filter' | 'fields'>,
  environment: string | null = null,
): string {
  const fields = query.fields === undefined ? null : [...new Set(query.fields)].sort()
  return digestOf({ v: 1, resource: query.resource, environment, filter: query.filter, fields })
}
