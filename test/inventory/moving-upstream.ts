import { sendJson, startUpstream, type SeenRequest, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * A REST upstream on loopback whose collection moves between requests (inserts, deletes, updates), served in
 * every pagination style the http connector knows, always in id order. It remembers when each record came and
 * went, so a test can ask which records existed for the whole of a walk.
 */

export const STYLES = ['offset', 'page', 'cursor', 'link_header', 'next_link', 'keyset'] as const
export type Style = (typeof STYLES)[number]
/** What the upstream says about the end besides the items: a total, has_more, or nothing. */
export type EndSignal = 'total' | 'has_more' | 'none'

export interface Mutation {
  /** Applied just before the upstream answers its request number `beforeRequest` (0-based). */
  readonly beforeRequest: number
  readonly op: 'insert' | 'delete' | 'update'
  readonly pick: number
}

interface Row {
  readonly id: string
  version: number
  amount: number
  readonly bornAt: number
  diedAt: number | null
}

export interface MovingUpstream {
  readonly upstream: TestUpstream
  /** Starts a new scenario: `size` records, these mutations, this style and end signal. */
  reset(scenario: { size: number; mutations: readonly Mutation[]; style: Style; end: EndSignal }): void
  /** Ids present before the first request and never deleted since. */
  existedThroughout(): Set<string>
  /** Requests answered in this scenario. */
  requests(): number
  /** Mutations applied so far that could move records (inserts and deletes). */
  moves(): number
  connectorList(): Record<string, unknown>
  close(): Promise<void>
}

export async function startMovingUpstream(): Promise<MovingUpstream> {
  let rows: Row[] = []
  let mutations: readonly Mutation[] = []
  let style: Style = 'offset'
  let end: EndSignal = 'total'
  let served = 0
  let moved = 0

  const live = () => rows.filter((r) => r.diedAt === null).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const idOf = (n: number) => `r${String(n).padStart(4, '0')}`

  const mutate = () => {
    for (const m of mutations) {
      if (m.beforeRequest !== served) continue
      const present = live()
      if (m.op === 'insert') {
        // a new id anywhere in the order, so inserts land before and after the walk's position
        let n = m.pick % 2000
        while (rows.some((r) => r.id === idOf(n))) n = (n + 1) % 2000
        rows.push({ id: idOf(n), version: 1, amount: 0, bornAt: served, diedAt: null })
        moved += 1
      } else if (present.length > 0) {
        const row = present[m.pick % present.length]!
        if (m.op === 'delete') {
          row.diedAt = served
          moved += 1
        } else {
          row.version += 1
          row.amount += 1
        }
      }
    }
  }

  const answer = (req: SeenRequest) => {
    const items = live().map((r) => ({ id: r.id, status: 'active', amount: r.amount, version: r.version }))
    const size = Number(req.url.searchParams.get('limit') ?? 5)
    let start: number
    let nextOf: (after: number) => Record<string, unknown> | null
    switch (style) {
      case 'offset':
        start = Number(req.url.searchParams.get('offset') ?? 0)
        nextOf = () => null
        break
      case 'page':
      case 'link_header': {
        const page = Number(req.url.searchParams.get('page') ?? 1)
        start = (page - 1) * size
        nextOf = () => null
        break
      }
      case 'cursor':
        // the worst common case: an opaque cursor that is an offset underneath
        start = req.url.searchParams.has('cursor') ? Number(Buffer.from(req.url.searchParams.get('cursor')!, 'base64url').toString()) : 0
        nextOf = (after) => ({ next_cursor: Buffer.from(String(after)).toString('base64url') })
        break
      case 'next_link':
        start = Number(req.url.searchParams.get('offset') ?? 0)
        nextOf = (after) => ({ next: `/items?offset=${after}&limit=${size}` })
        break
      case 'keyset': {
        // Stripe's starting_after: the records strictly after the given id
        const after = req.url.searchParams.get('start_after')
        start = after === null ? 0 : items.filter((i) => i.id <= after).length
        nextOf = () => null
        break
      }
    }
    const slice = items.slice(start, start + size)
    const after = start + slice.length
    const more = after < items.length
    const body: Record<string, unknown> = { items: slice }
    if (end === 'total') body.total = items.length
    if (end === 'has_more') body.has_more = more
    const headers: Record<string, string> = {}
    if (style === 'cursor' || style === 'next_link') Object.assign(body, more ? nextOf(after) : { next_cursor: null, next: null })
    if (style === 'link_header' && more) {
      const page = Number(req.url.searchParams.get('page') ?? 1)
      headers.link = `</items?page=${page + 1}&limit=${size}>; rel="next"`
    }
    return { body, headers }
  }

  const upstream = await startUpstream((req, res) => {
    mutate()
    served += 1
    const { body, headers } = answer(req)
    sendJson(res, 200, body, headers)
  })

  return {
    upstream,
    reset(scenario) {
      rows = Array.from({ length: scenario.size }, (_, i) => ({ id: idOf(i * 10), version: 1, amount: 0, bornAt: -1, diedAt: null }))
      mutations = scenario.mutations
      style = scenario.style
      end = scenario.end
      served = 0
      moved = 0
    },
    existedThroughout: () => new Set(rows.filter((r) => r.bornAt < 0 && r.diedAt === null).map((r) => r.id)),
    requests: () => served,
    moves: () => moved,
    connectorList() {
      const signal = end === 'total' ? { total_path: 'total' } : end === 'has_more' ? { has_more_path: 'has_more' } : {}
      const pagination =
        style === 'offset'
          ? { style: 'offset' }
          : style === 'page'
            ? { style: 'page' }
            : style === 'cursor'
              ? { style: 'cursor' }
              : style === 'link_header'
                ? { style: 'link_header' }
                : style === 'keyset'
                  ? { style: 'keyset' }
                  : { style: 'next_link', path: 'next' }
      // the link and cursor styles end on their own marker; a total or has_more only goes with offset and page
      return { path: '/items', page_size_param: 'limit', pagination, ...(style === 'offset' || style === 'page' || style === 'keyset' ? signal : {}) }
    },
    close: () => upstream.close(),
  }
}
