import type { ResourceConfig } from '../config/index.js'
import type { Connector, ReadPageResult, SourceRecord } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'
import { onSource, type SourceSample } from './probe-reads.js'
import { readFiltered } from './upstream-filters.js'

const name = 'keyset_order'
const promise = "keyset pages pass over no record: the list is in the order of the key each page starts after"

/** The largest page asked for to see the upstream's own order past the sample's first page. */
const ORDER_PAGE_MAX = 1000

/**
 * Keyset paging asks for the records after the last key read (`after=r030`), which reads every record only where
 * the list is in that key's order. An upstream listing in an order of its own (by creation, a record imported late
 * listed last) answers after the last key with nothing, or with a part, and the records it listed earlier under a
 * lower key are never read: no key falls, no id comes twice, and the walk ends complete, "proven". So the list is
 * read from its start in one page, then walked by its keyset pages as far: in the key's order the one page is those
 * pages end to end, and a record it holds that they passed over, still there when read by id after them, was skipped
 * with the list standing still (`unsafe`, naming the pagination field). A page whose keys fall refuses the walk
 * itself (`key-order.ts`): met in the sample's own pages that fails closed; met only in the one large page, walks of
 * the sample's size never see it, and it is `unsafe` as well.
 */
export async function keysetOrder(config: ResourceConfig, connector: Connector, samples: readonly SourceSample[], options: { pages: number; pageSize: number; signal?: AbortSignal }): Promise<Guarantee> {
  const { signal } = options
  const result = (status: Guarantee['status'], detail: string, keys: readonly string[] = []): Guarantee => ({ name, promise, status, detail, config_keys: keys })
  if (config.connector.kind !== 'http' || config.connector.list.pagination.style !== 'keyset')
    return result('not_applicable', config.connector.kind === 'sql' ? 'Warrant orders the SQL by the id itself' : 'positions are not keys: the upstream keeps its own order between pages')
  const field = config.connector.list.pagination.field ?? config.id_field
  const skipped: { source: string; id: string; ended: boolean }[] = []
  // pages out of the key's order (or sharing a key) refuse the walk that meets them: in the sample's own pages it
  // fails closed; in the one page below, which walks of the sample's size never saw, they end complete without it
  const refused: string[] = []
  const unordered: string[] = []
  let compared = 0
  for (const sample of samples) {
    const refusal = sample.results.find(byKeyset)
    if (refusal !== undefined) {
      refused.push(`${sample.source}: ${refusal.message}`)
      continue
    }
    if (sample.records.length === 0 || sample.results[0]?.kind !== 'page') continue
    // the list's own order, from its start, a page further than the sample reached (an upstream refusing a page that
    // large, Stripe's limit above 100, is asked one of the sample's size, against keyset pages of half that); read
    // before the walk below, so a record it holds existed when that walk began
    const plans = [
      { size: Math.min(ORDER_PAGE_MAX, sample.records.length + options.pageSize + 1), pageSize: options.pageSize, pages: options.pages },
      { size: options.pageSize, pageSize: Math.max(1, Math.floor(options.pageSize / 2)), pages: 2 },
    ]
    let whole: readonly SourceRecord[] | null = null
    let plan = plans[0]!
    let disordered = false
    for (const tried of plans) {
      const read = await firstPage(connector, sample.source, tried.size, signal)
      if (read.kind === 'unavailable' || read.kind === 'rate_limited') return result('unknown', `${sample.source}: the list read from its start in one page could not be read (${read.kind}: ${read.message})`)
      if (byKeyset(read)) {
        unordered.push(`${sample.source}: the list read from its start in one page of ${tried.size}: ${read.message}`)
        disordered = true
        break
      }
      if (read.kind === 'page') {
        whole = read.items
        plan = tried
        break
      }
    }
    if (disordered) continue
    if (whole === null) return result('unknown', `${sample.source}: the list read from its start in one page could not be read at ${plans.map((p) => p.size).join(' or ')} records`)
    // the keyset pages, as far: in the key's order they hold the page above, record for record
    const walked = await readFiltered(connector, sample.source, {}, { pages: plan.pages, pageSize: plan.pageSize, ...(signal ? { signal } : {}) })
    if (walked.failure !== null) return result('unknown', `${sample.source}: its keyset pages could not be read again (${walked.failure})`)
    compared += 1
    // past as many records as the pages read, a record is one they have yet to reach, unless they reached the end
    const passed = (walked.exhausted ? whole : whole.slice(0, walked.ids.size)).filter((r) => !walked.ids.has(r.id))
    if (passed.length === 0) continue
    // one deleted meanwhile proves nothing: one still there after the walk existed all through it
    const still = await connector.readByIds(passed.map((r) => r.id), signal, onSource(passed, sample.source))
    for (const r of passed) if (still.records.has(r.id)) skipped.push({ source: sample.source, id: r.id, ended: walked.exhausted })
  }
  const keys = ['connector.list.pagination.field', 'connector.list.query']
  if (unordered.length > 0 && skipped.length === 0)
    return result('unsafe', `${unordered.join('; ')}; walks of the sample's pages never met it there, and end complete without the records such an order passes over`, keys)
  if (skipped.length > 0) {
    const named = skipped.slice(0, 5).map((s) => `"${s.id}" of ${s.source}`).join(', ')
    const how = skipped.some((s) => s.ended)
      ? `the keyset pages reached the end of the list without ${named}`
      : `the list holds ${named} among as many of its first records as its keyset pages read, and they did not reach them`
    return result(
      'unsafe',
      `${how}, though each was listed before that walk began and still there when read by id after it: the upstream does not list in the order of "${field}", so each page, starting after the last key read, passes over records listed earlier under a lower one, and a walk ends complete ("proven") without them; make the list sort by "${field}" (a sort parameter in connector.list.query), or page another way`,
      keys,
    )
  }
  if (refused.length > 0) return result('fails_closed', `${refused.join('; ')} (the walk refuses the source there: not complete)`, keys)
  if (compared === 0) return result('unknown', 'no source gave a page to compare its order with')
  return result('holds', `the list read from its start in one page held no record the keyset pages passed over, on ${compared} source(s)`)
}

/** A page refused for its keys: out of the key's order, or two records under one. */
function byKeyset(read: ReadPageResult): read is Extract<ReadPageResult, { kind: 'refused' }> {
  return read.kind === 'refused' && read.configKey === 'connector.list.pagination.field'
}

/** One page from the list's start, in its own session. */
async function firstPage(connector: Connector, source: string, pageSize: number, signal: AbortSignal | undefined) {
  const session = await connector.openSession()
  try {
    return await session.readPage({ source, filter: {}, position: null, pageSize, ...(signal ? { signal } : {}) })
  } finally {
    await session.close()
  }
}
