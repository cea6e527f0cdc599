import { z } from 'zod'
import { type Envelope, FILTER_DESCRIPTION, SEARCH_MAX_DEADLINE_MS, cursorArgument, fieldList, filterSchema } from '../contract/index.js'
import { type CursorCodec, MAX_CURSOR_CHARS, walkInventory } from '../inventory/index.js'
import { reportWalk } from '../telemetry/index.js'
import type { Resource } from './catalogue.js'
import { upstreamDigestOf } from './upstream-digest.js'

/** The search request, on every surface (HTTP body, MCP tool input, CLI flags). */
export const searchRequestSchema = z
  .strictObject({
    filter: filterSchema.default({}).describe(FILTER_DESCRIPTION),
    fields: fieldList().optional().describe('review fields to return; default all'),
    page_size: z.number().int().min(1).max(1000).default(100).describe('records per upstream page'),
    cursor: cursorArgument(MAX_CURSOR_CHARS).optional().describe('continuation.cursor of an earlier answer, unchanged, with the same filter, fields and page_size; leave it out to start (null and "" are refused)'),
    mode: z.enum(['walk', 'page']).default('walk').describe('walk: until done or the budget; page: one upstream page'),
    budget: z
      .strictObject({
        max_pages: z.number().int().min(1).max(100_000).optional().describe('upstream pages to read at most'),
        max_items: z.number().int().min(1).max(1_000_000).optional().describe('records to return at most'),
        deadline_ms: z.number().int().min(1).max(SEARCH_MAX_DEADLINE_MS).optional().describe('time to walk at most'),
      })
      .default({})
      .describe('limits on this walk; one that stops it makes the answer incomplete (CLIENT_LIMIT_REACHED) with a cursor to continue'),
  })
  .meta({ id: 'SearchRequest' })
export type SearchRequest = z.input<typeof searchRequestSchema>

export interface SearchDeps {
  readonly cursorCodec: CursorCodec
  /** run before each page is handed over; what it throws ends the walk (a request's authority asked again) */
  readonly beforePage?: () => Promise<void>
}

/**
 * Searches one resource and returns the envelope with each record cut to the requested review fields.
 * Denied and unknown fields are refused before any upstream call.
 */
export async function searchResource(resource: Resource, request: SearchRequest, deps: SearchDeps): Promise<Envelope> {
  const items: Record<string, unknown>[] = []
  const { status, ...rest } = await walkResource(resource, request, deps, (page) => {
    for (const item of page) items.push(item)
  })
  return { status, items, ...rest }
}

/**
 * The same search, each page's records (cut to the requested review fields) handed to `onPage` as the walk reads
 * them, awaited before the next page is handed over (the walk reads that one meanwhile); returns the envelope
 * without its items. A surface that sends its answer as it is read (the HTTP API) uses this, so a large answer
 * is never held whole. `signal` ends the walk.
 *
 * @example
 * const summary = await walkResource(resource, { filter: {} }, { cursorCodec }, (items) => send(items))
 */
export async function walkResource(
  resource: Resource,
  request: SearchRequest,
  deps: SearchDeps & { readonly signal?: AbortSignal },
  onPage: (items: readonly Record<string, unknown>[]) => Promise<void> | void,
): Promise<Omit<Envelope, 'items'>> {
  const parsed = searchRequestSchema.parse(request)
  resource.policy.checkFilter(parsed.filter)
  const fields = resource.policy.fields(parsed.fields)
  const summary = await walkInventory(
    resource.connector,
    { resource: resource.name, filter: parsed.filter, fields, pageSize: parsed.page_size, cursor: parsed.cursor ?? null },
    { maxPages: parsed.budget.max_pages, maxItems: parsed.budget.max_items, deadlineMs: parsed.budget.deadline_ms },
    {
      scope: {
        resource: resource.name,
        environment: resource.environment,
        visibility: resource.config.visibility.description,
        restricted: resource.config.visibility.restricted,
        upstream: upstreamDigestOf(resource.config),
      },
      cursorCodec: deps.cursorCodec,
      mode: parsed.mode,
      maxDeadlineMs: SEARCH_MAX_DEADLINE_MS,
      ...(resource.maxRetryAfterSeconds === undefined ? {} : { maxRetryAfterSeconds: resource.maxRetryAfterSeconds }),
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
    async (page) => {
      await deps.beforePage?.()
      await onPage(page.map((r) => resource.policy.project(r.fields, fields)))
    },
  )
  reportWalk(resource.telemetry, resource.name, summary)
  return summary
}
