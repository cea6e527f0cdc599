import type { ResourceConfig } from '../config/index.js'
import { clauseTypeProblem, matchesFilter, type Clause, type Filter } from '../contract/index.js'
import type { Connector, SourceRecord } from '../connectors/index.js'
import type { Guarantee } from './guarantee.js'
import { onSource, type SourceSample } from './probe-reads.js'

const PROMISE = 'a filter the upstream applies (upstream_filters, filter_params) leaves no matching record out'

/** One clause the config delegates: its op, and the config line to name when the upstream does not honour it. */
interface Delegated {
  readonly field: string
  readonly op: 'eq' | 'in' | 'lt' | 'lte' | 'gt' | 'gte' | 'contains'
  readonly comma: boolean
  readonly key: string
}

/**
 * Tries each delegated filter clause on the upstream. Warrant re-checks every record it gets back, which removes
 * what an upstream lets through too widely, but nothing brings back a record the upstream left out (only the first
 * of `status=a,b` applied, `gte` applied as `gt`, a case-sensitive match): the walk would end, complete, without
 * it. So each clause is sent with values taken from the records the unfiltered probe read (two for `in`, a bound
 * among them for an order), and every sampled record that matches it here must come back. One that does not, and
 * still matches when read again by id, was dropped: `unsafe`, naming the config line.
 */
export async function upstreamFilters(config: ResourceConfig, connector: Connector, samples: readonly SourceSample[], options: { pages: number; pageSize: number; signal?: AbortSignal }): Promise<Guarantee[]> {
  const clauses = delegatedClauses(config)
  if (clauses.length === 0)
    return [{ name: 'upstream_filters', promise: PROMISE, status: 'not_applicable', detail: config.connector.kind === 'sql' ? 'Warrant builds the SQL itself' : 'no filter is sent upstream', config_keys: [] }]
  const out: Guarantee[] = []
  for (const d of clauses) out.push(await probeClause(config, connector, samples, d, options))
  return out
}

function delegatedClauses(config: ResourceConfig): Delegated[] {
  if (config.connector.kind !== 'http') return []
  const list = config.connector.list
  const declared: Delegated[] = list.upstream_filters.map((f, i) => ({ field: f.field, op: f.op, comma: f.encoding === 'comma', key: `connector.list.upstream_filters[${i}]` }))
  for (const field of Object.keys(list.filter_params)) declared.push({ field, op: 'eq', comma: false, key: `connector.list.filter_params.${field}` })
  return declared
}

async function probeClause(
  config: ResourceConfig,
  connector: Connector,
  samples: readonly SourceSample[],
  d: Delegated,
  options: { pages: number; pageSize: number; signal?: AbortSignal },
): Promise<Guarantee> {
  const name = `upstream_filters.${d.field}.${d.op}`
  const result = (status: Guarantee['status'], detail: string): Guarantee => ({ name, promise: PROMISE, status, detail, config_keys: status === 'holds' || status === 'unknown' ? [] : [d.key] })
  const clause = clauseFrom(config, samples.flatMap((s) => s.records), d)
  if (clause === null) return result('unknown', `the sampled records hold no ${d.op === 'in' ? 'two distinct values' : 'value'} of "${d.field}" to filter on`)
  const filter = { [d.field]: { [d.op]: clause.value } } as Filter
  const shown = `${d.field} ${d.op} ${JSON.stringify(clause.value)}`
  const dropped: SourceRecord[] = []
  let unsure = 0
  let compared = 0
  let unmatched = 0
  for (const sample of samples) {
    const expected = sample.records.filter((r) => matchesFilter(r.fields, filter, config.fields))
    compared += expected.length
    const read = await readFiltered(connector, sample.source, filter, options)
    if (read.failure !== null) return result(read.retryable ? 'unknown' : 'fails_closed', `${sample.source}: the filtered read (${shown}) failed: ${read.failure}`)
    unmatched += read.unmatched
    const missing = expected.filter((r) => !read.ids.has(r.id))
    if (missing.length === 0) continue
    // a record changed since the sample proves nothing: only one that still matches, read again, was left out
    const again = await connector.readByIds(missing.map((r) => r.id), options.signal, onSource(missing, sample.source))
    const still = missing.filter((r) => {
      const now = again.records.get(r.id)
      return now !== undefined && matchesFilter(now.fields, filter, config.fields)
    })
    // one that could not be read again is neither proof nor acquittal
    unsure += again.failed.length
    // the walk ended, or (the upstream keeping the sample's order) went past the sample, without them
    if (read.exhausted || read.pastSample(sample)) dropped.push(...still)
    else unsure += still.length
  }
  if (dropped.length > 0)
    return result(
      'unsafe',
      `${shown}: ${dropped.length} sampled record(s) that match it did not come back (first: "${dropped[0]!.id}"): the upstream leaves out records the filter matches, and a walk with it says complete without them; remove the clause from the config (Warrant then filters alone) or fix its param or encoding`,
    )
  if (unsure > 0) return result('unknown', `${shown}: ${unsure} sampled match(es) did not come back among the first ${options.pages + 1} filtered page(s), or could not be read again by id; read more pages (--pages) to tell`)
  if (compared === 0) return result('unknown', `${shown}: no sampled record matches it`)
  const held = `${shown}: each of the ${compared} sampled record(s) that match it came back`
  // Extra records are removed by Warrant's own re-check, so answers stay right; but a parameter that narrows nothing
  // makes every walk with it read every record it lets through, and a filtered total count them
  if (unmatched > 0)
    return result(
      'warning',
      `${held}, but the upstream also sent ${unmatched} record(s) that do not match it: it does not apply this parameter (or applies it otherwise). Warrant re-checks every record, so answers stay right, but each walk with it reads the records it lets through; fix its param or encoding, or remove the clause`,
    )
  return result('holds', held)
}

/**
 * The filter to try: for `eq`, `contains` the most common sampled value; for `in` the two most common; for an
 * order the sampled value nearest the middle (a bound records sit on, so `gte` applied as `gt` shows).
 */
function clauseFrom(config: ResourceConfig, records: readonly SourceRecord[], d: Delegated): Clause | null {
  const type = config.fields[d.field]
  if (type === undefined) return null
  const counts = new Map<string, { value: string | number | boolean; n: number }>()
  for (const r of records) {
    const raw = r.fields[d.field]
    for (const v of d.op === 'contains' ? (Array.isArray(raw) ? raw : []) : [raw]) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue
      // a value holding a comma is never sent in a comma list (Warrant filters it alone): it would test nothing
      if (d.comma && String(v).includes(',')) continue
      if (clauseTypeProblem({ field: d.field, op: d.op, value: d.op === 'in' ? [v] : v }, type) !== null) continue
      const k = JSON.stringify(v)
      const seen = counts.get(k)
      counts.set(k, { value: v, n: (seen?.n ?? 0) + 1 })
    }
  }
  const common = [...counts.values()].sort((a, b) => b.n - a.n).map((c) => c.value)
  if (d.op === 'in') return common.length < 2 ? null : { field: d.field, op: 'in', value: common.slice(0, 2) }
  if (common.length === 0) return null
  if (d.op === 'eq' || d.op === 'contains') return { field: d.field, op: d.op, value: common[0]! }
  // the candidate (of at most 25) that splits the sample most evenly, compared as the field's type compares
  const candidates = common.slice(0, 25)
  let best = candidates[0]!
  let bestGap = Infinity
  for (const bound of candidates) {
    const below = records.filter((r) => matchesFilter(r.fields, { [d.field]: { lt: bound } } as Filter, config.fields)).length
    const gap = Math.abs(below - records.length / 2)
    if (gap < bestGap) [best, bestGap] = [bound, gap]
  }
  return { field: d.field, op: d.op, value: best }
}

interface FilteredRead {
  readonly ids: ReadonlySet<string>
  readonly exhausted: boolean
  /** The read returned a record the (unexhausted) sample does not hold, after the sampled ones in the sample's order. */
  readonly pastSample: (sample: SourceSample) => boolean
  readonly failure: string | null
  readonly retryable: boolean
  /** Records the upstream sent that Warrant's re-check found not to match the filter (judged, so not unjudged ones). */
  readonly unmatched: number
}

/**
 * One filtered walk of a source, at most one page more than the sample read: if the upstream keeps its order,
 * the sampled matches (a subset of the sample) all come within it.
 */
export async function readFiltered(connector: Connector, source: string, filter: Filter, options: { pages: number; pageSize: number; signal?: AbortSignal }): Promise<FilteredRead> {
  const session = await connector.openSession()
  const order: string[] = []
  let unmatched = 0
  try {
    let position: string | null = null
    for (let i = 0; i <= options.pages; i++) {
      const page = await session.readPage({ source, filter, position, pageSize: options.pageSize, ...(options.signal ? { signal: options.signal } : {}) })
      if (page.kind !== 'page') return { ids: new Set(order), exhausted: false, pastSample: () => false, failure: `${page.kind} (${page.message})`, retryable: page.kind === 'rate_limited' || page.kind === 'unavailable', unmatched }
      order.push(...page.items.map((r) => r.id))
      unmatched += Math.max(0, (page.received ?? page.items.length) - page.items.length - (page.unjudged?.count ?? 0))
      if (page.next === null) return { ids: new Set(order), exhausted: true, pastSample: () => true, failure: null, retryable: false, unmatched }
      position = page.next
    }
  } finally {
    await session.close()
  }
  return { ids: new Set(order), exhausted: false, pastSample: (sample) => wentPast(order, sample), failure: null, retryable: false, unmatched }
}

/** Whether the filtered ids keep the sample's order and reach a record past the sample (so no sampled match is still to come). */
function wentPast(order: readonly string[], sample: SourceSample): boolean {
  if (sample.exhausted) return false
  const at = new Map(sample.records.map((r, i) => [r.id, i]))
  let last = -1
  for (const id of order) {
    const i = at.get(id)
    if (i === undefined) return true
    if (i < last) return false
    last = i
  }
  return false
}
