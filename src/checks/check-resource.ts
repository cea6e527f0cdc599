import type { ResourceConfig } from '../config/index.js'
import { sameFieldValue, sameVersion, type FieldTypeNames } from '../contract/index.js'
import { numberMisfitMessage, setNumberMisfit, setStringMisfit, stringMisfitMessage, type Connector, type FieldTypeMisfit, type NumberColumn, type SourceRecord, type StringColumn, type TableProblem, type UpstreamCall } from '../connectors/index.js'
import { verdictOf, type CheckReport, type Guarantee } from './guarantee.js'
import { readGuarantees, sampleSources, type SourceSample } from './probe-reads.js'
import { keysetOrder } from './keyset-order.js'
import { pageOrigin } from './page-origin.js'
import { compensations } from './compensations.js'
import { credentialRefusal } from './credential-refusal.js'
import { repeatedVersions } from './repeated-versions.js'
import { shortPages } from './short-pages.js'
import { upstreamFilters } from './upstream-filters.js'
import { probeWrites } from './write-probe.js'

export interface CheckOptions {
  readonly name: string
  readonly config: ResourceConfig
  readonly connector: Connector
  /** Pages read from the start of each source; default 3. */
  readonly pages?: number
  /** Records per page; default 50. */
  readonly pageSize?: number
  /** With an id: a conditional write with a stale version, per action, that must be refused (never a change). */
  readonly writeProbeId?: string
  /**
   * With it: the write probe too, on the record given here for each source (`writeProbeTargets`); a source with none
   * (and no `writeProbeId`) is probed on the first record its own first page lists.
   */
  readonly writeProbeIds?: ReadonlyMap<string, string>
  /** The one source the write probe is sent to; absent, every source the resource declares. */
  readonly writeProbeSource?: string
  readonly signal?: AbortSignal
  /**
   * The connector's calls as it reports them (the array fills while the probe runs: `openGateway({ onCall })`).
   * With it, the probe also says what a batch read by ids (`get.batch`) answered.
   */
  readonly calls?: readonly UpstreamCall[]
  /**
   * The same upstream with a credential it never issued (`Resource.stranger`), or null where that means nothing
   * (sql, no credential): with it, the probe asks whether the upstream refuses a credential it does not know
   * (`credential_refused`). Absent: not asked.
   */
  readonly stranger?: Connector | null
}

const DEFAULTS = { pages: 3, pageSize: 50 }

/**
 * Probes one resource, read-only: a few pages of each source, the first page again, a first page too small to
 * be capped, the page before the first page number, the list's own order against its keyset pages, each filter clause the upstream is to apply, a read by id, the write configuration, and the first pages again with a credential the upstream never issued. Says which guarantees hold and which config lines break the others.
 *
 * @example const report = await checkResource({ name: 'subscriptions', config, connector })
 */
export async function checkResource(options: CheckOptions): Promise<CheckReport> {
  const { pages, pageSize } = { ...DEFAULTS, ...options }
  const samples = await sampleSources(options.connector, { pages, pageSize, ...(options.signal ? { signal: options.signal } : {}) })
  const tableProblems = options.connector.tableProblems ? await options.connector.tableProblems() : undefined
  const guarantees: Guarantee[] = [
    ...readGuarantees(options.config, samples),
    ...(await upstreamFilters(options.config, options.connector, samples, { pages, pageSize, ...(options.signal ? { signal: options.signal } : {}) })),
    await shortPages(options.config, options.connector, samples, options.signal),
    await pageOrigin(options.config, options.connector, samples, pageSize, options.signal),
    await keysetOrder(options.config, options.connector, samples, { pages, pageSize, ...(options.signal ? { signal: options.signal } : {}) }),
    ...(await readById(options.connector, samples, options.config, options.calls ?? null)),
    versions(options.config, samples, (await options.connector.versionColumnProblem?.()) != null),
    await fieldTypes(options.connector),
    idColumn(tableProblems),
    ...(await conditionalWrites(options.config, options.connector, tableProblems)),
    ...compensations(options.config),
    ...(options.writeProbeId === undefined && options.writeProbeIds === undefined
      ? []
      : await probeWrites({
          config: options.config,
          connector: options.connector,
          samples,
          ...(options.writeProbeId === undefined ? {} : { id: options.writeProbeId }),
          ...(options.writeProbeIds === undefined ? {} : { ids: options.writeProbeIds }),
          ...(options.writeProbeSource === undefined ? {} : { source: options.writeProbeSource }),
        })),
    ...(options.stranger === undefined ? [] : [await credentialRefusal(options.config, options.connector, options.stranger, samples, { pageSize, ...(options.signal ? { signal: options.signal } : {}) })]),
  ]
  return { resource: options.name, connector: options.connector.kind, guarantees, verdict: verdictOf(guarantees) }
}

const READ_BY_ID = 'a record read by id is the record the list showed'

async function readById(connector: Connector, samples: readonly SourceSample[], config: ResourceConfig, calls: readonly UpstreamCall[] | null): Promise<Guarantee[]> {
  const listed = samples.flatMap((s) => s.records.map((record) => ({ record, source: s.source })))
  const batch = (made: readonly UpstreamCall[] | null, asked: number) => {
    const guarantee = batchRead(config, made, asked)
    return guarantee ? [guarantee] : []
  }
  if (listed.length === 0) return [{ name: 'read_by_id', promise: READ_BY_ID, status: 'unknown', detail: 'no record was listed to read back', config_keys: [] }, ...batch([], 0)]
  // The first and the last record of the sample: different pages where there are several.
  const picked = [...new Map([listed[0]!, listed[listed.length - 1]!].map((p) => [p.record.id, p])).values()]
  const probes = picked.map((p) => p.record)
  const before = calls?.length ?? 0
  // each on the source that listed it (its address), as an operation reads a target
  const result = await connector.readByIds(probes.map((r) => r.id), undefined, new Map(picked.map((p) => [p.record.id, p.source])))
  return [readBack(probes, result, config), ...batch(calls === null ? null : calls.slice(before), probes.length)]
}

function readBack(probes: readonly SourceRecord[], result: Awaited<ReturnType<Connector['readByIds']>>, config: ResourceConfig): Guarantee {
  const promise = READ_BY_ID
  const problems: string[] = []
  for (const failed of result.failed) problems.push(`"${failed.id}": ${failed.message}`)
  for (const id of result.missing) problems.push(`"${id}" is listed but reading it by id finds nothing`)
  for (const listedRecord of probes) {
    const read = result.records.get(listedRecord.id)
    if (!read) continue
    const difference = differenceOf(listedRecord, read, config.fields)
    if (difference) problems.push(`"${listedRecord.id}": ${difference}`)
  }
  if (problems.length === 0) return { name: 'read_by_id', promise, status: 'holds', detail: `${probes.length} record(s) read back identical`, config_keys: [] }
  // a sql resource reads by id from its table, by its id column: no get to configure
  return { name: 'read_by_id', promise, status: 'fails_closed', detail: problems.join('; '), config_keys: [config.connector.kind === 'sql' ? 'id_field' : 'connector.get'] }
}

/**
 * What the read by ids of the probe's records said about `get.batch`, from the connector's calls (`made`, null
 * when they were not observed). Null when the resource has no batch read. A batch answer that cannot be used
 * costs a request per record, never a wrong answer (each record is then read alone): `fails_closed`, naming the
 * config line.
 */
function batchRead(config: ResourceConfig, made: readonly UpstreamCall[] | null, asked: number): Guarantee | null {
  if (config.connector.kind !== 'http' || !config.connector.get.batch) return null
  const batch = config.connector.get.batch
  const name = 'read_by_ids_batch'
  const promise = 'several records read by id in one request (get.batch) are the records read alone'
  const guarantee = (status: Guarantee['status'], detail: string, keys: readonly string[] = []): Guarantee => ({ name, promise, status, detail, config_keys: keys })
  if (asked === 0) return guarantee('unknown', 'no record was listed to read back')
  if (made === null) return guarantee('unknown', "the connector's calls were not observed")
  const answers = made.filter((c) => c.ids !== undefined)
  if (answers.length === 0) return guarantee('unknown', asked < 2 ? 'one record was listed: a batch read needs two' : 'no batch read was made')
  const outcomes = new Set(answers.map((c) => c.outcome))
  const request = `GET ${batch.path}?${batch.ids_param}=…`
  const alone = 'each record is read alone by get.path instead'
  if (outcomes.has('foreign_id'))
    return guarantee('fails_closed', `${request} answered records that were not asked for: the upstream ignores "${batch.ids_param}" (or filters on another parameter); ${alone}`, ['connector.get.batch.ids_param'])
  if (outcomes.has('not_whole'))
    return guarantee('fails_closed', `a record in the answer to ${request} is not the same JSON as the record read alone (a summary, or another representation); ${alone}`, ['connector.get.batch.path', 'connector.get.batch.record_path'])
  if (outcomes.has('unexpected')) return guarantee('fails_closed', `${request} did not answer a JSON list at items_path "${batch.items_path}"; ${alone}`, ['connector.get.batch.items_path'])
  const failed = answers.find((c) => c.outcome === 'failed')
  if (failed) return guarantee('fails_closed', `${request} failed (${failed.status === null ? 'no answer' : `status ${failed.status}`}); ${alone}`, ['connector.get.batch.path'])
  if (outcomes.has('rate_limited')) return guarantee('unknown', `${request} was rate limited (429)`)
  if (outcomes.has('partial'))
    return guarantee('fails_closed', `${request} left out records the list shows (an id it leaves out proves nothing; those are read alone)`, ['connector.get.batch'])
  return guarantee('holds', `${asked} records read in ${answers.length} request(s), one of each answer compared with its read alone`)
}

/**
 * What differs between a record as the list showed it and as read by id, judged as the executor judges a target it
 * reads again (`sameVersion`, `sameFieldValue`): a timestamp in another spelling is the same instant, so a config
 * that commits is not called broken here, and another instant or value still is.
 */
function differenceOf(listed: SourceRecord, read: SourceRecord, types: FieldTypeNames): string | null {
  if (read.id !== listed.id) return `reading it by id returned record "${read.id}"`
  if (!sameVersion(read.version, listed.version)) return `the list says version "${listed.version}", the read by id "${read.version}"`
  const fields = new Set([...Object.keys(listed.fields), ...Object.keys(read.fields)])
  // a field one answer has and the other lacks differs (the executor's check of a field says so too), even against a null
  const differ = [...fields].filter(
    (f) => Object.hasOwn(listed.fields, f) !== Object.hasOwn(read.fields, f) || !sameFieldValue(read.fields[f], listed.fields[f], Object.hasOwn(types, f) ? types[f] : undefined),
  )
  return differ.length === 0 ? null : `field(s) ${differ.join(', ')} differ between the list and the read by id`
}

/** Whether the upstream holds each declared field as the type declared, so a filter on it means what it says. */
async function fieldTypes(connector: Connector): Promise<Guarantee> {
  const name = 'field_types'
  const promise = 'each field is stored as the type declared, so a filter on it compares as declared'
  if (!connector.fieldTypeMisfits) return { name, promise, status: 'not_applicable', detail: 'the upstream declares no column types', config_keys: [] }
  const misfits = await connector.fieldTypeMisfits()
  if (misfits === null) return { name, promise, status: 'unknown', detail: "the table's column types could not be read", config_keys: [] }
  if (misfits.length === 0) return { name, promise, status: 'holds', detail: 'every declared field sits on a column of a fitting type', config_keys: [] }
  // a filter on such a field is refused (not complete, saying why), never answered by the wrong comparison
  return { name, promise, status: 'fails_closed', detail: misfits.map((m) => m.problem).join('; '), config_keys: misfits.map((m) => `fields.${m.field}`) }
}

/**
 * What the table's catalogue says of its id column (`tableProblems`: undefined where the upstream has none, null
 * where it could not be read). One no key proves unique is a warning, not a failure: each walk checks its pages
 * and is refused on a repeat, so a view whose ids are unique works, at one more count per page.
 */
function idColumn(problems: readonly TableProblem[] | null | undefined): Guarantee {
  const name = 'id_column'
  const promise = 'each id names one row and is read exactly, so a walk neither skips nor doubles a record'
  if (problems === undefined) return { name, promise, status: 'not_applicable', detail: 'the upstream has no catalogue of keys', config_keys: [] }
  if (problems === null) return { name, promise, status: 'unknown', detail: "the table's catalogue could not be read", config_keys: [] }
  const refused = problems.filter((p) => p.affects === 'reads')
  if (refused.length > 0)
    return { name, promise, status: 'fails_closed', detail: refused.map((p) => `${p.message} (reads, reads by id and writes are refused)`).join('; '), config_keys: refused.flatMap((p) => p.configKeys) }
  const checked = problems.filter((p) => p.affects === 'walks')
  if (checked.length > 0) return { name, promise, status: 'warning', detail: checked.map((p) => p.message).join('; '), config_keys: checked.flatMap((p) => p.configKeys) }
  return { name, promise, status: 'holds', detail: 'the id column is the primary key or carries a unique index, and holds no NULL', config_keys: [] }
}

function versions(config: ResourceConfig, samples: readonly SourceSample[], versionRefused: boolean): Guarantee {
  const promise = 'every record has a version, so a write can be made conditional on it'
  const records = samples.flatMap((s) => s.records)
  // a record with no version never reaches `records`: the pages count it (unjudged, versionless)
  const empty = samples.reduce((n, s) => n + s.results.reduce((m, r) => m + (r.kind === 'page' ? (r.unjudged?.versionless?.count ?? 0) : 0), 0), 0)
  const total = records.length + empty
  if (total === 0) return { name: 'versions', promise, status: 'unknown', detail: 'no record was read', config_keys: [] }
  // a version that repeats across records is no version, whether or not some records lack one
  const repeated = repeatedVersions(config, records, versionRefused)
  if (repeated !== null && (empty === 0 || repeated.status !== 'warning')) return { name: 'versions', promise, ...repeated }
  if (empty === 0) return { name: 'versions', promise, status: 'holds', detail: `${records.length} records, each with a version`, config_keys: [] }
  const connector = config.connector
  const key = connector.kind === 'http' ? 'connector.version' : 'version_field'
  const why =
    connector.kind === 'http' && connector.version.from === 'etag'
      ? 'version.from is etag, yet the list gives no ETag for them (no ETag header, no etag, _etag or version member of the item); have the list carry each item\'s ETag as an etag member, or set connector.version to {from: field, field: …} naming a field that changes on every write'
      : `their version field "${connector.kind === 'http' && connector.version.from === 'field' ? connector.version.field : config.version_field}" is null or empty`
  // frozen with no version, a member would be judged changed against every version read later: never frozen
  return { name: 'versions', promise, status: 'fails_closed', detail: `${empty} of ${total} records have no version (${why}): selections leave them out and say not complete`, config_keys: [key] }
}

/**
 * Actions whose precondition uses a field its column compares otherwise than declared: the connector refuses
 * every write of them (the database would judge the precondition otherwise than the plan did).
 */
function misfitPreconditions(actions: readonly [string, ResourceConfig['actions'][string]][], misfits: readonly FieldTypeMisfit[]): { message: string; configKeys: string[] }[] {
  return actions.flatMap(([name, action]) => {
    const misfit = misfits.find((m) => Object.hasOwn(action.precondition, m.field))
    return misfit === undefined ? [] : [{ message: `action "${name}" has a precondition on "${misfit.field}": ${misfit.cause}, so the database would judge it otherwise than the plan`, configKeys: [`actions.${name}.precondition`] }]
  })
}

/**
 * Actions whose `set` gives a misfit field a value (a literal or a template; null is every column's "none"), or a
 * literal string its column would not keep as written ("abc" into an integer column; a template is judged at
 * proposal, with its parameters): the proposal refuses every plan of them, and the connector every write
 * (src/connectors/set-misfit.ts).
 */
function misfitSets(
  actions: readonly [string, ResourceConfig['actions'][string]][],
  misfits: readonly FieldTypeMisfit[],
  strings: readonly StringColumn[],
  numbers: readonly NumberColumn[],
): { message: string; configKeys: string[] }[] {
  return actions.flatMap(([name, action]) => [
    ...misfits
      .filter((m) => Object.hasOwn(action.set, m.field) && action.set[m.field] !== null)
      .map((m) => ({ message: `action "${name}" sets "${m.field}": ${m.cause}, so the database would refuse the value or keep it as another type`, configKeys: [`actions.${name}.set.${m.field}`] })),
    ...Object.entries(action.set).flatMap(([field, value]) => {
      const unkept = typeof value === 'string' && !value.includes('{{') ? setStringMisfit({ [field]: value }, strings) : null
      return unkept === null ? [] : [{ message: `action "${name}" ${stringMisfitMessage(unkept)}`, configKeys: [`actions.${name}.set.${field}`] }]
    }),
    ...Object.entries(action.set).flatMap(([field, value]) => {
      const unheld = typeof value === 'number' ? setNumberMisfit({ [field]: value }, numbers) : null
      return unheld === null ? [] : [{ message: `action "${name}" ${numberMisfitMessage(unheld)}`, configKeys: [`actions.${name}.set.${field}`] }]
    }),
  ])
}

/**
 * Actions whose every write the connector rolls back: a field over a column the table moves on every UPDATE (MySQL's
 * `ON UPDATE CURRENT_TIMESTAMP`) that the action neither sets nor lists in `write.may_change`, and that is not the
 * version or the `updated_at` the connector stamps (`untouched-fields.ts`): the UPDATE changes what no one approved.
 */
function movedUnset(config: ResourceConfig, actions: readonly [string, ResourceConfig['actions'][string]][], moved: readonly string[]): { message: string; configKeys: string[] }[] {
  const own = (field: string) => field === config.version_field || field === config.id_field || (field === 'updated_at' && config.fields.updated_at === 'timestamp')
  return actions.flatMap(([name, action]) => {
    const exempt = new Set((action.write?.may_change ?? []).map((path) => path.split('.')[0]!))
    const unset = moved.filter((field) => !own(field) && !Object.hasOwn(action.set, field) && !exempt.has(field))
    if (unset.length === 0) return []
    const named = unset.map((f) => `"${f}"`).join(', ')
    return [
      {
        message: `action "${name}" does not set ${named}, whose column the table moves itself on every UPDATE (ON UPDATE CURRENT_TIMESTAMP), so each write would change a field no one approved and is rolled back before COMMIT; list ${named} in the action's write.may_change, set it in the action, make it the version_field, or drop the ON UPDATE clause`,
        configKeys: [`actions.${name}`, ...unset.map((f) => `fields.${f}`)],
      },
    ]
  })
}

async function conditionalWrites(config: ResourceConfig, connector: Connector, tableProblems: readonly TableProblem[] | null | undefined): Promise<Guarantee[]> {
  const promise = 'a write lands only on the version that was reviewed'
  const actions = Object.entries(config.actions)
  if (actions.length === 0) return [{ name: 'conditional_writes', promise, status: 'not_applicable', detail: 'no actions declared', config_keys: [] }]
  if (config.connector.kind === 'sql') {
    // a version column that cannot move on every write would let a stale writer overwrite a write unseen; a table
    // that keeps no transactions, or ids that cannot name rows, and the connector refuses every write
    // asked at once, so they share one catalogue read. misfits null: the column facts (types, UPDATE triggers) could
    // not be read; the version's problem is then unknown too
    const [version, misfits, strings, numbers, moved] = await Promise.all([
      connector.versionColumnProblem?.() ?? null,
      connector.fieldTypeMisfits ? connector.fieldTypeMisfits() : [],
      connector.stringColumns?.() ?? [],
      connector.numberColumns?.() ?? [],
      connector.fieldsMovedOnUpdate?.() ?? [],
    ]).then(([v, m, s, n, u]) => [v ?? null, m, s ?? [], n ?? [], u ?? []] as const)
    const problems = [
      ...(version === null ? [] : [{ message: version, configKeys: ['version_field'] }]),
      ...movedUnset(config, actions, moved),
      ...misfitPreconditions(actions, misfits ?? []),
      ...misfitSets(actions, misfits ?? [], strings, numbers),
      ...(tableProblems ?? []).filter((p) => p.affects === 'writes' || p.affects === 'reads'),
    ]
    if (problems.length > 0)
      return [{ name: 'conditional_writes', promise, status: 'fails_closed', detail: problems.map((p) => `${p.message} (writes are refused)`).join('; '), config_keys: problems.flatMap((p) => p.configKeys) }]
    // facts that could not be read refuse no write (sql-connector.ts `refuseUnsafeWrites`): nothing vouches for it
    const unread = [...(misfits === null ? ['column types and UPDATE triggers'] : []), ...(tableProblems === null ? ['engine and keys'] : [])]
    if (unread.length > 0)
      return [
        {
          name: 'conditional_writes',
          promise,
          status: 'unknown',
          detail: `the table's catalogue could not be read (its ${unread.join(', its ')}: the connection may lack access to the catalogue, or the database did not answer): nothing shows the database enforces the version, and writes are not refused for it`,
          config_keys: [],
        },
      ]
    const enforced = `UPDATE … WHERE id = ? AND ${config.version_field} = ?: the database enforces the version, and each write moves ${config.version_field} itself; against a change by another writer only where that writer moves ${config.version_field} too (it must mean nothing else: a counter, updated_at)`
    // versionCondition compares a timestamp version to the millisecond a record shows: finer digits are not compared
    const digits = config.version_field !== undefined && config.fields[config.version_field] === 'timestamp' ? ((await connector.versionSecondDigits?.()) ?? null) : null
    if (digits !== null && digits > 3)
      return [
        {
          name: 'conditional_writes',
          promise,
          status: 'warning',
          detail: `${enforced}; but "${config.version_field}" keeps ${digits} digits of a second and Warrant reads and compares it to the millisecond: a change another writer makes within the same millisecond as the version a selection froze is not seen, and an approved write lands over it; use an integer version column (a counter every writer moves), or a version no two writes of a row can share within a millisecond`,
          config_keys: ['version_field'],
        },
      ]
    return [{ name: 'conditional_writes', promise, status: 'holds', detail: enforced, config_keys: [] }]
  }
  return actions.map(([name, action]): Guarantee => {
    // `version` says where the version goes (header, body field, query parameter, or none); older configs
    // only had the `if_match` flag.
    const write = action.write as { if_match?: boolean; version?: { in: string; name?: string; path?: string; param?: string } } | undefined
    const placement = write?.version ?? (write?.if_match === false ? { in: 'none' } : { in: 'header', name: 'If-Match' })
    if (placement.in === 'none')
      return {
        name: `conditional_writes.${name}`,
        promise,
        status: 'unsafe',
        detail: `action "${name}" does not send the version: a change made upstream between Warrant's re-read and its write is overwritten`,
        config_keys: [write?.version ? `actions.${name}.write.version` : `actions.${name}.write.if_match`],
      }
    const where = placement.in === 'header' ? `the ${placement.name ?? 'If-Match'} header` : placement.in === 'body' ? `body field ${placement.path}` : `query parameter ${placement.param}`
    return { name: `conditional_writes.${name}`, promise, status: 'holds', detail: `action "${name}" sends the version in ${where}; run --write-probe ID to see the upstream refuse a stale one`, config_keys: [] }
  })
}
