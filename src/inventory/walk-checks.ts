import { WarrantError, filterSchema, protoKeyPaths, type Filter } from '../contract/index.js'
import type { DecodedCursor } from './cursor-codec.js'
import { DEFAULT_BUDGET, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Budget } from './search-types.js'

// A bad query or cursor is the caller's mistake, so it throws `invalid_request` / `invalid_cursor` before any
// upstream is read, rather than becoming an incomplete reason.

export function checkSources(prior: DecodedCursor, sources: readonly string[]): void {
  const names = prior.sources.map((s) => s.source)
  if (names.length !== sources.length || names.some((name, i) => name !== sources[i]))
    throw new WarrantError('invalid_cursor', 'the cursor was issued for another set of sources than this resource now has', {
      reason: 'other_query',
    })
}

export function checkBudget(budget: Budget): Required<Budget> {
  const out = { ...DEFAULT_BUDGET }
  for (const key of ['maxPages', 'maxItems', 'deadlineMs'] as const) {
    const value = budget[key]
    if (value === undefined) continue
    if (!Number.isInteger(value) || value <= 0) throw new WarrantError('invalid_request', `budget.${key} must be a positive integer`, { field: key })
    out[key] = value
  }
  return out
}

export function checkPageSize(pageSize: number | undefined): number {
  if (pageSize === undefined) return DEFAULT_PAGE_SIZE
  if (!Number.isInteger(pageSize) || pageSize <= 0 || pageSize > MAX_PAGE_SIZE)
    throw new WarrantError('invalid_request', `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`, { field: 'pageSize' })
  return pageSize
}

export function checkFilter(filter: Filter): Filter {
  // the schema would drop a "__proto__" condition without a word: the walk would match more than asked
  const reserved = protoKeyPaths(filter, ['filter'])
  if (reserved.length > 0)
    throw new WarrantError('invalid_request', `the filter is not valid: ${reserved.join(', ')} is a reserved name, never a field`, { field: reserved[0], issues: ['a reserved name (__proto__) is never a field name'] })
  const parsed = filterSchema.safeParse(filter)
  if (!parsed.success)
    throw new WarrantError('invalid_request', 'the filter is not valid', { field: 'filter', issues: parsed.error.issues.map((i) => i.message) })
  return parsed.data
}
