import { digestOf } from '../contract/index.js'
import type { SearchQuery } from './search-types.js'

/**
 * The identity of a query, which a cursor is bound to: resource, environment, filter and field set, and, when the
 * caller names it, where the connector reads and by what id (`upstream`: a cursor's positions index one table or list
 * in one id order; followed in another, an archive beside the live table or rows named by another column, they
 * skipped or repeated records in an answer that read complete). Key order in the filter and the order of `fields` do
 * not matter; the page size does not count (changing it while resuming is harmless), nor does the cursor itself.
 *
 * @example queryFingerprint({ resource: 'subscriptions', filter: { status: 'past_due' } }, 'billing-prod')
 */
export function queryFingerprint(
  query: Pick<SearchQuery, 'resource' | 'filter' | 'fields'>,
  environment: string | null = null,
  upstream?: string,
): string {
  const fields = query.fields === undefined ? null : [...new Set(query.fields)].sort()
  return digestOf({ v: 1, resource: query.resource, environment, filter: query.filter, fields, ...(upstream === undefined ? {} : { upstream }) })
}
