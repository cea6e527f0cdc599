import { scanTemplate } from '../config/list-template.js'
import type { ResourceConfig } from '../config/index.js'
import type { Connector } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'
import type { SourceSample } from './probe-reads.js'

/** Records asked for: fewer than any upstream's page cap, so the page comes back full. */
const SMALL_PAGE = 2

const promise = 'a page the upstream shortens (a page cap below the size asked, an ignored page size) is never taken for the end of the list'

/**
 * A walk takes a page shorter than asked, without a next cursor or link at the configured path, as the end (many
 * APIs leave `next` out on the last page). An upstream capping its pages below the size asked answers every page
 * short, so a path its answers do not have ends every walk after its first page, complete, and the sample,
 * read at the same capped size, agrees. A page of two records is full under any cap: the connector must find
 * where the list goes on, or refuse the answer.
 */
export async function shortPages(config: ResourceConfig, connector: Connector, samples: readonly SourceSample[], signal?: AbortSignal): Promise<Guarantee> {
  const name = 'short_pages'
  const result = (status: Guarantee['status'], detail: string, keys: readonly string[] = []): Guarantee => ({ name, promise, status, detail, config_keys: keys })
  if (config.connector.kind !== 'http') return result('not_applicable', 'the upstream is a table: a page is never taken for the end by its size')
  const list = config.connector.list
  const style = list.pagination.style
  // link_header ends a walk like a missing cursor: a short page without a Link header, or one without rel="next"
  if (style !== 'cursor' && style !== 'next_link' && style !== 'link_header')
    return result('not_applicable', `${style} pagination ends a walk only on an empty page or a tested end signal`)
  const sizeSent = list.page_size_param !== undefined || (list.method === 'POST' && list.body !== undefined && scanTemplate(list.body).placeholders.includes('page_size'))
  if (!sizeSent) return result('not_applicable', 'no page size is sent: only an empty page is short')
  const marker = style === 'cursor' ? 'connector.list.pagination.next_cursor_path' : style === 'next_link' ? 'connector.list.pagination.path' : 'connector.list.pagination'
  const sizeKey = list.page_size_param !== undefined ? 'connector.list.page_size_param' : 'connector.list.body'

  const problems: string[] = []
  let tested = 0
  for (const sample of samples) {
    // the sample's count of the source: more than a small page, or a small page proves nothing
    const known = sample.records.length + sample.results.reduce((n, r) => n + (r.kind === 'page' && r.unjudged ? r.unjudged.count : 0), 0)
    if (sample.exhausted && known <= SMALL_PAGE) continue
    const session = await connector.openSession()
    try {
      const page = await session.readPage({ source: sample.source, filter: {}, position: null, pageSize: SMALL_PAGE, ...(signal ? { signal } : {}) })
      tested += 1
      if (page.kind === 'refused' && page.configKey === marker) problems.push(`${sample.source}: asked for ${SMALL_PAGE} records: ${page.message}`)
      else if (page.kind !== 'page') return result('unknown', `${sample.source}: a first page of ${SMALL_PAGE} records could not be read (${page.kind}: ${page.message})`)
      else if (page.next === null && (!sample.exhausted || page.items.length + (page.unjudged?.count ?? 0) < known))
        problems.push(
          `${sample.source}: asked for ${SMALL_PAGE} records, the answer read as the end of a list the sample found more records in${style === 'link_header' ? ' (its Link header names no rel="next")' : ''}`,
        )
    } finally {
      await session.close()
    }
  }
  if (problems.length > 0)
    return result(
      'unsafe',
      `${problems.join('; ')}. A walk whose pages the upstream shortens (its page cap below the size asked, or a page size it ignores) takes each short page for the end: it stops after its first page, complete`,
      [marker, sizeKey],
    )
  if (tested === 0) return result('unknown', `no source has more than ${SMALL_PAGE} records to tell a short page from the end`)
  return result('holds', `a first page of ${SMALL_PAGE} records said where the list goes on${style === 'link_header' ? ' (a Link header rel="next")' : ''}, on ${tested} source(s)`)
}
