import { resourceSchema, type ResourceConfig } from '../../../src/config/schema.js'
import type { Filter } from '../../../src/contract/index.js'
import type { Connector, ReadPageResult, SourceRecord, UpstreamCall } from '../../../src/connectors/connector.js'
import { startRawJsonUpstream, type TestUpstream } from './upstream-server.js'

export interface Item {
  readonly id: string
  readonly status: string
  readonly amount: number
  readonly version: number
}

/** `n` items with ids r001…, every third one past_due. */
export function collection(n: number): Item[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `r${String(i + 1).padStart(3, '0')}`,
    status: i % 3 === 0 ? 'past_due' : 'active',
    amount: i * 10,
    version: 1,
  }))
}

/**
 * A parsed resource over an http connector. `connector` is merged over a minimal valid one (one source
 * "main" at `origin`, cursor pagination, version from the `version` field).
 */
export function httpResource(connector: Record<string, unknown>, extra: Record<string, unknown> = {}): ResourceConfig {
  return resourceSchema.parse({
    environment: { name: 'test-upstream' },
    connector: {
      kind: 'http',
      timeout_ms: 2000,
      get: { path: '/items/{id}' },
      version: { from: 'field', field: 'version' },
      ...connector,
      list: { path: '/items', pagination: { style: 'cursor' }, ...(connector.list as Record<string, unknown> | undefined) },
    },
    fields: { id: 'string', status: 'string', amount: 'number', version: 'integer' },
    review_fields: ['id', 'status'],
    ...extra,
  })
}

/** Records every upstream call the connector reports. */
export function callLog(): { calls: UpstreamCall[]; onCall: (call: UpstreamCall) => void } {
  const calls: UpstreamCall[] = []
  return { calls, onCall: (call) => calls.push(call) }
}

/**
 * Walks one source to its end, page by page, and returns every record and every result. Fails (throws) if
 * a page is not a page or the walk does not end within `maxPages`.
 */
export async function walk(
  connector: Connector,
  source: string,
  pageSize: number,
  filter: Filter = {},
  maxPages = 100,
): Promise<{ records: SourceRecord[]; results: ReadPageResult[] }> {
  const session = await connector.openSession()
  const records: SourceRecord[] = []
  const results: ReadPageResult[] = []
  let position: string | null = null
  for (let i = 0; i < maxPages; i++) {
    const result = await session.readPage({ source, filter, position, pageSize })
    results.push(result)
    if (result.kind !== 'page') throw new Error(`page ${i + 1} was ${result.kind}: ${JSON.stringify(result)}`)
    records.push(...result.items)
    if (result.next === null) {
      await session.close()
      return { records, results }
    }
    position = result.next
  }
  throw new Error(`the walk did not end within ${maxPages} pages`)
}

/** Ids in walk order. */
export function idsOf(records: readonly SourceRecord[]): string[] {
  return records.map((r) => r.id)
}

/**
 * An upstream that answers JSON items as the test wrote them, literals and all (JSON.stringify could not write
 * 9007199254740993): `GET /items?skip&limit` pages them by offset (`{items}`), `GET /items/{id}` answers the item
 * whose `id` member comes first and is that id (quoted or not).
 */
export function startRawItemsUpstream(items: readonly string[]): Promise<TestUpstream> {
  return startRawJsonUpstream((req) => {
    if (req.url.pathname === '/items') {
      const skip = Number(req.url.searchParams.get('skip') ?? 0)
      const limit = Number(req.url.searchParams.get('limit') ?? 2)
      return `{"items":[${items.slice(skip, skip + limit).join(',')}]}`
    }
    const id = req.url.pathname.slice('/items/'.length)
    const item = items.find((text) => text.startsWith(`{"id":${id},`) || text.startsWith(`{"id":"${id}",`))
    return item ?? '{"error":"not_found"}'
  })
}

/** The list config of `startRawItemsUpstream`, one source named `up`. */
export function rawItemsConnector(origin: string): Record<string, unknown> {
  return { sources: [{ name: 'up', base_url: origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset', offset_param: 'skip' }, items_path: 'items' } }
}

/**
 * The list config of a Stripe-like API: `GET /v1/items?limit=&starting_after=` answers `{data, has_more, total_count}`,
 * the next page starting after the last id.
 */
export function stripeLikeList(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path: '/v1/items',
    page_size_param: 'limit',
    items_path: 'data',
    has_more_path: 'has_more',
    total_path: 'total_count',
    pagination: { style: 'keyset', field: 'id', param: 'starting_after' },
    ...extra,
  }
}
