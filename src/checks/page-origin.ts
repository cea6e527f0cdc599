import type { ResourceConfig } from '../config/index.js'
import type { Connector } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'
import type { SourceSample } from './probe-reads.js'

const promise = 'page-number paging starts at the upstream\'s first page, so no page is left unread before it'

/**
 * Page-number paging starts at `pagination.first` (default 1). An upstream counting from 0 (Spring's `page=0`)
 * then has a page before it that no walk reads: its first page of records is missing from every answer, and with
 * no total to fall short of, the walk ends complete. The page before `first` is read once: records there that are
 * not the first page's (the first page again, an empty page or a refusal is how an upstream says there is none)
 * mean the walks start one page late. The other way round, a first page that answers nothing while the page after it
 * answers records (json-server counts from 1 and answers `_page=0` with nothing) ends every walk at once, complete and
 * empty: the origin is one too low (its page before, `slice(-2n, -n)` there, holds records too, and is not the cause).
 * The walk now tests such an empty first page by the page after it, and its first page by the page before it (when
 * `first` is above 0), and is not complete there: those fail closed.
 */
export async function pageOrigin(config: ResourceConfig, connector: Connector, samples: readonly SourceSample[], pageSize: number, signal?: AbortSignal): Promise<Guarantee> {
  const name = 'page_origin'
  const result = (status: Guarantee['status'], detail: string, keys: readonly string[] = []): Guarantee => ({ name, promise, status, detail, config_keys: keys })
  if (config.connector.kind !== 'http' || config.connector.list.pagination.style !== 'page') return result('not_applicable', 'no page-number paging')
  const list = config.connector.list
  const first = list.pagination.style === 'page' ? list.pagination.first : 1
  const before = first - 1
  const found: string[] = []
  const late: string[] = []
  let walkRefuses = false
  for (const sample of samples) {
    const firstPage = new Set(sample.records.slice(0, sample.firstPageAgain?.length ?? 0).map((r) => r.id))
    const session = await connector.openSession()
    try {
      // an empty first page ends every walk there, complete: records on the page after it mean the origin is one too low
      let opened = sample.results[0]
      // the walk reads the page after an empty first page, and the page before its first, itself, and refuses the
      // source when either holds records: page `first` read alone (not as a walk's start) says which it was
      const refused = opened?.kind === 'refused' && opened.configKey === 'connector.list.pagination.first'
      if (refused) {
        walkRefuses = true
        opened = await session.readPage({ source: sample.source, filter: {}, position: `${first}:0`, pageSize, ...(signal ? { signal } : {}) })
        if (opened.kind === 'unavailable' || opened.kind === 'rate_limited') return result('unknown', `${sample.source}: page ${first} could not be read (${opened.message})`)
        if (opened.kind === 'page') for (const r of opened.items) firstPage.add(r.id)
      }
      if ((refused && opened?.kind === 'refused') || (opened?.kind === 'page' && opened.items.length === 0 && (opened.unjudged?.count ?? 0) === 0)) {
        const next = await session.readPage({ source: sample.source, filter: {}, position: `${first + 1}:0`, pageSize, ...(signal ? { signal } : {}) })
        if (next.kind === 'unavailable' || next.kind === 'rate_limited') return result('unknown', `${sample.source}: page ${first + 1} could not be read (${next.message})`)
        const records = next.kind === 'page' ? next.items.length + (next.unjudged?.count ?? 0) : 0
        if (records > 0) {
          late.push(`${sample.source}: page ${first} answers no record, and page ${first + 1} answers ${records}${next.kind === 'page' && next.items[0] ? ` (first: "${next.items[0].id}")` : ''}`)
          continue
        }
      }
      const page = await session.readPage({ source: sample.source, filter: {}, position: `${before}:0`, pageSize, ...(signal ? { signal } : {}) })
      if (page.kind === 'unavailable' || page.kind === 'rate_limited') return result('unknown', `${sample.source}: page ${before} could not be read (${page.message})`)
      if (page.kind !== 'page') continue
      const records = page.items.length + (page.unjudged?.count ?? 0)
      const others = page.items.filter((r) => !firstPage.has(r.id))
      if (others.length > 0 || (page.items.length === 0 && records > 0))
        found.push(`${sample.source}: page ${before} answers ${records} record(s) that page ${first} does not hold${others[0] ? ` (first: "${others[0].id}")` : ''}`)
    } finally {
      await session.close()
    }
  }
  // a declared total is never reached by a walk one page short, and a walk reads the page below `first` itself: both
  // fail closed; a walk that reads no page below its first (first: 0) ends complete
  const total = list.total_path !== undefined || list.total_header !== undefined
  if (late.length > 0)
    return result(
      total || walkRefuses ? 'fails_closed' : 'unsafe',
      `${late.join('; ')}: the upstream counts pages from ${first + 1}, and every walk starting at page ${first} ends on that empty page${total ? ' (below its total: not complete)' : walkRefuses ? ' (its read of the page after it finds the records: not complete)' : ', complete, with no record'}; set pagination.first: ${first + 1}`,
      ['connector.list.pagination.first'],
    )
  if (found.length === 0) return result('holds', `page ${before} holds no records other than page ${first}'s`)
  return result(
    total || walkRefuses ? 'fails_closed' : 'unsafe',
    `${found.join('; ')}: the upstream counts pages from ${before}, and every walk starting at page ${first} leaves those records out${walkRefuses ? ' (its read of that page finds them: not complete)' : total ? ' (the total is then never reached: not complete)' : ', complete'}; set pagination.first: ${before}`,
    ['connector.list.pagination.first'],
  )
}
