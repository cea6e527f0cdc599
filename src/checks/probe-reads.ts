import type { ResourceConfig } from '../config/index.js'
import type { Connector, ReadPageResult, SourceRecord } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'

/** What the probe read from one source: a few pages from the start, and the first page once more. */
export interface SourceSample {
  readonly source: string
  readonly records: readonly SourceRecord[]
  /** Every page result, failures included. */
  readonly results: readonly ReadPageResult[]
  /** True when the sample reached the source's end: the whole collection was read. */
  readonly exhausted: boolean
  /** The ids of the first page read a second time, or null when that read failed. */
  readonly firstPageAgain: readonly string[] | null
}

export interface ReadProbeOptions {
  readonly pages: number
  readonly pageSize: number
  readonly signal?: AbortSignal
}

/** Reads up to `pages` pages of each source from the start, then the first page again. Read-only. */
export async function sampleSources(connector: Connector, options: ReadProbeOptions): Promise<SourceSample[]> {
  const samples: SourceSample[] = []
  for (const source of connector.sources) {
    const session = await connector.openSession()
    try {
      const records: SourceRecord[] = []
      const results: ReadPageResult[] = []
      let position: string | null = null
      let exhausted = false
      for (let i = 0; i < options.pages; i++) {
        const result = await session.readPage({ source, filter: {}, position, pageSize: options.pageSize, ...(options.signal ? { signal: options.signal } : {}) })
        results.push(result)
        if (result.kind !== 'page') break
        records.push(...result.items)
        if (result.next === null) {
          exhausted = true
          break
        }
        position = result.next
      }
      const again = await session.readPage({ source, filter: {}, position: null, pageSize: options.pageSize, ...(options.signal ? { signal: options.signal } : {}) })
      samples.push({ source, records, results, exhausted, firstPageAgain: again.kind === 'page' ? again.items.map((r) => r.id) : null })
    } finally {
      await session.close()
    }
  }
  return samples
}

/** The guarantees that follow from list reads: reachable, declared fields, unique ids, stable order, totals. */
export function readGuarantees(resource: ResourceConfig, samples: readonly SourceSample[]): Guarantee[] {
  return [reachable(resource, samples), declaredFields(resource, samples), uniqueIds(resource, samples), stableOrder(resource, samples), totals(resource, samples)]
}

function failures(samples: readonly SourceSample[]): string[] {
  const out: string[] = []
  for (const s of samples)
    for (const r of s.results) if (r.kind !== 'page') out.push(`${s.source}: ${r.kind} (${r.message})`)
  return out
}

/** The config lines refused pages blame (an end signal a read past it disproved names its total or has_more key). */
function blamed(samples: readonly SourceSample[]): string[] {
  const keys = samples.flatMap((s) => s.results.flatMap((r) => (r.kind === 'refused' && r.configKey !== undefined ? [r.configKey] : [])))
  return [...new Set(keys)]
}

/** Failures that may clear with time (no answer, a timeout, a 5xx, a 429): the probe could not tell, nothing is proven broken. */
const TRANSIENT = new Set<ReadPageResult['kind']>(['unavailable', 'rate_limited'])

function reachable(resource: ResourceConfig, samples: readonly SourceSample[]): Guarantee {
  const failed = failures(samples)
  // the records the upstream sent, kept or not (a record that cannot be judged or frozen is the other lines' finding)
  const read = samples.reduce((n, s) => n + s.results.reduce((m, r) => m + (r.kind === 'page' ? (r.received ?? r.items.length + (r.unjudged?.count ?? 0)) : 0), 0), 0)
  const keys = blamed(samples)
  const name = 'pages_read'
  const promise = 'every source answers list reads with a page Warrant can parse'
  if (failed.length === 0) return { name, promise, status: 'holds', detail: `${read} records in ${samples.reduce((n, s) => n + s.results.length, 0)} pages from ${samples.length} source(s)`, config_keys: [] }
  const permanent = samples.some((s) => s.results.some((r) => r.kind !== 'page' && !TRANSIENT.has(r.kind)))
  if (!permanent) {
    // An upstream not started yet, or down, says nothing about the config: "could not tell" (exit 4), naming where its
    // address is, never BROKEN with paging keys that would send the operator to edit a config that may be right.
    const address = resource.connector.kind === 'sql' ? 'connector.url' : 'connector.sources'
    return { name, promise, status: 'unknown', detail: `${failed.join('; ')}: Warrant could not tell; start the upstream (or correct its address) and run the check again`, config_keys: [address] }
  }
  // a sql resource has no sources or list: its reads are the table's
  const fallback = resource.connector.kind === 'sql' ? ['connector.table'] : ['connector.sources', 'connector.list']
  return { name, promise, status: 'fails_closed', detail: failed.join('; '), config_keys: keys.length > 0 ? keys : fallback }
}

function declaredFields(resource: ResourceConfig, samples: readonly SourceSample[]): Guarantee {
  const promise = 'every record carries every declared field, with its declared type'
  const records = samples.flatMap((s) => s.records)
  // Records the connector could not judge never reach `records`: the pages count them, with the fields.
  let unjudged = 0
  const absent = new Set<string>()
  const mistyped = new Set<string>()
  for (const s of samples)
    for (const r of s.results) {
      if (r.kind !== 'page' || !r.unjudged) continue
      unjudged += r.unjudged.count
      for (const f of r.unjudged.absent) absent.add(f)
      for (const f of r.unjudged.mistyped) mistyped.add(f)
    }
  for (const r of records) for (const field of Object.keys(resource.fields)) if (!Object.hasOwn(r.fields, field)) absent.add(field)
  const total = records.length + unjudged
  if (total === 0) return { name: 'declared_fields', promise, status: 'unknown', detail: 'no record was read', config_keys: [] }
  if (absent.size + mistyped.size === 0)
    return { name: 'declared_fields', promise, status: 'holds', detail: `${total} records, ${Object.keys(resource.fields).length} fields each`, config_keys: [] }
  const pathKey = resource.connector.kind === 'http' ? 'connector.field_paths' : 'fields'
  const parts = [
    absent.size > 0 ? `absent: ${[...absent].map((f) => `"${f}"`).join(', ')}` : '',
    mistyped.size > 0 ? `of another type: ${[...mistyped].map((f) => `"${f}"`).join(', ')}` : '',
  ].filter(Boolean)
  return {
    name: 'declared_fields',
    promise,
    // Warrant never reads an absent field as null: such records are counted as SHAPE_MISMATCH, never judged.
    status: 'fails_closed',
    detail: `${unjudged} of ${total} records cannot be judged (${parts.join('; ')}): answers over them say not complete (SHAPE_MISMATCH)`,
    config_keys: [...[...absent].map((f) => `${pathKey}.${f}`), ...[...mistyped].map((f) => `fields.${f}`)],
  }
}

function uniqueIds(resource: ResourceConfig, samples: readonly SourceSample[]): Guarantee {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const s of samples) for (const r of s.records) (seen.has(r.id) ? twice : seen).add(r.id)
  return {
    name: 'unique_ids',
    promise: 'no id comes twice in one walk, across pages and sources',
    status: twice.size === 0 ? (seen.size === 0 ? 'unknown' : 'holds') : 'fails_closed',
    detail: twice.size === 0 ? `${seen.size} distinct ids` : `${twice.size} id(s) came twice (first: ${[...twice][0]}): the pages overlap or the id is not unique`,
    config_keys: twice.size === 0 ? [] : resource.connector.kind === 'sql' ? ['id_field'] : ['id_field', 'connector.list.pagination'],
  }
}

function stableOrder(resource: ResourceConfig, samples: readonly SourceSample[]): Guarantee {
  const unstable: string[] = []
  // only a source whose first page was read twice says anything about its order
  const compared = samples.filter((s) => s.firstPageAgain !== null && s.results[0]?.kind === 'page')
  if (compared.length === 0)
    return { name: 'stable_order', promise: 'the same page read twice returns the same ids in the same order', status: 'unknown', detail: 'no first page was read twice', config_keys: [] }
  for (const s of compared) {
    const again = s.firstPageAgain ?? []
    if (s.records.length === 0) continue
    const first = s.records.slice(0, again.length).map((r) => r.id)
    if (first.join('\u0000') !== again.join('\u0000')) unstable.push(s.source)
  }
  const offsetLike = resource.connector.kind === 'http' && ['offset', 'page'].includes(resource.connector.list.pagination.style)
  return {
    name: 'stable_order',
    promise: 'the same page read twice returns the same ids in the same order',
    status: unstable.length === 0 ? 'holds' : 'fails_closed',
    detail:
      unstable.length === 0
        ? 'the first page read twice came back identical'
        : `the first page changed between two reads on ${unstable.join(', ')}${offsetLike ? ': offset paging over an unstable order skips and repeats records (walks report SNAPSHOT_INVALIDATED)' : ''}`,
    // a sql walk orders by the id column in one snapshot: a page that changes there is the id column's doing
    config_keys: unstable.length === 0 ? [] : resource.connector.kind === 'sql' ? ['id_field'] : ['connector.list.query', 'connector.list.pagination'],
  }
}

function totals(resource: ResourceConfig, samples: readonly SourceSample[]): Guarantee {
  const promise = "a total the upstream gives agrees with what a walk finds"
  const declared = resource.connector.kind === 'http' && hasTotal(resource.connector.list)
  if (!declared) return { name: 'totals', promise, status: 'not_applicable', detail: 'no total declared', config_keys: [] }
  // The connector reads one page past an end signalled on a page with items: a total that ended a walk too early
  // (a count of one page) shows as a refusal naming it, never as a walk the same total ended.
  const disproved = blamed(samples).filter((k) => k === 'connector.list.total_path' || k === 'connector.list.total_header')
  if (disproved.length > 0)
    return { name: 'totals', promise, status: 'fails_closed', detail: `a read past the end the total signalled found more records: ${failures(samples).join('; ')}`, config_keys: [...disproved, 'connector.list.total_kind'] }
  const wrong: string[] = []
  let compared = 0
  for (const s of samples) {
    // a source that answered no page has shown no total: that is "could not tell" (pages_read says why), not a wrong total
    if (!s.results.some((r) => r.kind === 'page')) continue
    const total = [...s.results].reverse().find((r): r is Extract<ReadPageResult, { kind: 'page' }> => r.kind === 'page' && r.total !== undefined)?.total
    if (total === undefined) {
      wrong.push(`${s.source}: no total in the answer`)
      continue
    }
    // The total counts what the upstream sends: a record it sent that cannot be judged (declared_fields says so) is
    // counted, or a correct total would read as wrong and send the operator to remove it.
    const received = s.results.reduce((n, r) => n + (r.kind === 'page' ? (r.received ?? r.items.length) : 0), 0)
    // Pages that run dry (an empty page, or one the connector cannot advance past) below the total.
    const last = s.results[s.results.length - 1]
    const ranDry = s.results.some((r) => r.kind === 'page' && (r.received ?? r.items.length) === 0 && r.next !== null) || (last !== undefined && last.kind !== 'page')
    // a count the records already read exceed is no count of this list, however far the walk would go (this page's
    // count, a page size): a sample short of the end shows it
    if (!s.exhausted && total < received) {
      wrong.push(`${s.source}: total says ${total}, yet the pages read hold ${received}`)
      continue
    }
    if (!s.exhausted && ranDry && total > received) {
      wrong.push(`${s.source}: total says ${total}, the pages ran dry after ${received}`)
      continue
    }
    if (!s.exhausted) continue
    compared += 1
    if (total !== received) wrong.push(`${s.source}: total says ${total}, the walk received ${received}`)
  }
  const key = (resource.connector as { list: { total_header?: string } }).list.total_header === undefined ? 'connector.list.total_path' : 'connector.list.total_header'
  if (wrong.length > 0) return { name: 'totals', promise, status: 'fails_closed', detail: wrong.join('; '), config_keys: [key, 'connector.list.total_kind'] }
  if (compared === 0 && !samples.some((s) => s.results.some((r) => r.kind === 'page'))) return { name: 'totals', promise, status: 'unknown', detail: 'no page was read', config_keys: [] }
  if (compared === 0) return { name: 'totals', promise, status: 'unknown', detail: 'the sample did not reach the end of any source; read more pages (--pages) to compare', config_keys: [] }
  return { name: 'totals', promise, status: 'holds', detail: `the total matched a whole walk on ${compared} source(s)`, config_keys: [] }
}

function hasTotal(list: object): boolean {
  const l = list as { total_path?: unknown; total_header?: unknown }
  return l.total_path !== undefined || l.total_header !== undefined
}

/**
 * `readByIds`'s `sourceOf` for records a probe listed from `source`: each is read back there alone, as an operation
 * reads a target on its member's source. Read across the sources, another source holding the id too, or failing to
 * read it, would be laid at the door of this source's get path, or hide what this source did.
 */
export function onSource(records: readonly SourceRecord[], source: string): ReadonlyMap<string, string> {
  return new Map(records.map((r) => [r.id, source]))
}
