import { versionPlacementOf, type ResourceConfig } from '../config/index.js'
import { withRepresentation, type Connector, type SourceRecord, type WriteOutcome } from '../connectors/index.js'
import { renderHttpWrite } from '../plans/http-write.js'
import type { Guarantee } from './guarantee.js'
import type { SourceSample } from './probe-reads.js'
import { WarrantError } from '../contract/index.js'

/** A version no upstream has handed out: what the probe sends instead of the record's own. */
export const STALE_VERSION = 'warrant-check-stale-0'

const PROMISE = 'the upstream refuses a write made with a stale version'

/**
 * A probe that found no record to write to says nothing of how the source treats a stale version: the source's
 * earlier probe (its status, its time) is kept as it was, neither revoked nor renewed.
 */
const KEPT = 'This run proves nothing of the source; an earlier probe of it, if any, is kept as it was (its time not renewed)'

/**
 * The name of one action's probe on one source in a check report: `write_probe.ACTION` where the resource has one
 * source, `write_probe.ACTION@SOURCE` where it has several (each source is its own upstream, probed on its own).
 */
export function writeProbeName(connector: Pick<Connector, 'sources'>, action: string | null, source: string): string {
  const name = action === null ? 'write_probe' : `write_probe.${action}`
  return connector.sources.length === 1 ? name : `${name}@${source}`
}

/**
 * For each action and each source probed (`source`, or every source the resource declares), one write to a record
 * of that source with a stale version, setting each field the action sets to the value the record already has: the
 * upstream must refuse it. If it does not, the write changed nothing (the values were already there), and the probe
 * reports that the upstream does not enforce versions. The record is read again afterwards and compared with what
 * it was, field for field. The record: the id given for that source (`ids`), else `id`, else the first record that
 * source's own first page listed (`samples`). Each source is its own upstream: a source that holds no such record
 * (or listed none) is not probed (unknown, saying why), and what one source answered says nothing of another.
 *
 * @example const guarantees = await probeWrites({ config, connector, ids: new Map([['eu', 'sub_0042']]), samples })
 */
export async function probeWrites(options: {
  readonly config: ResourceConfig
  readonly connector: Connector
  readonly id?: string
  readonly ids?: ReadonlyMap<string, string>
  readonly source?: string
  readonly samples?: readonly SourceSample[]
}): Promise<Guarantee[]> {
  const { config, connector } = options
  if (options.source !== undefined && !connector.sources.includes(options.source))
    throw new WarrantError('invalid_request', `unknown source "${options.source}" for --source; the resource's sources: ${connector.sources.map((s) => `"${s}"`).join(', ')}`, { source: options.source })
  const actions = Object.entries(config.actions)
  if (actions.length === 0) return [{ name: 'write_probe', promise: PROMISE, status: 'not_applicable', detail: 'no actions declared', config_keys: [] }]
  const out: Guarantee[] = []
  for (const source of options.source === undefined ? connector.sources : [options.source]) {
    const cannot = (why: string): Guarantee => ({ name: writeProbeName(connector, null, source), promise: PROMISE, status: 'unknown', detail: `cannot probe source "${source}": ${why}`, config_keys: [], source })
    const given = options.ids?.get(source) ?? options.id
    const id = given ?? sampled(options.samples ?? [], source)
    if (typeof id !== 'string') {
      out.push(cannot(id.why))
      continue
    }
    // read, written and read back on this source alone: another source's answer to a write of that id (a 412 of
    // a record it does not hold) says nothing of this record, nor of this source's upstream
    const read = await connector.readByIds([id], undefined, new Map([[id, source]]))
    const record = read.records.get(id)
    if (!record) {
      const why = read.failed[0]?.message ?? `record "${id}" was not found`
      out.push(cannot(`${why}; give the id of a record it holds${connector.sources.length === 1 ? ' with --write-probe ID' : ` with --write-probe "${source}=ID"`}. ${KEPT}`))
      continue
    }
    for (const [name, action] of actions) {
      // a probe whose record was gone proved nothing of the source: no record_id, so nothing is kept of it
      const { gone, ...probe } = await probeAction(config, connector, record, source, name, action)
      out.push({ ...probe, name: writeProbeName(connector, name, source), source, ...(gone ? {} : { record_id: id }) })
    }
  }
  return out
}

/** The first record `source`'s own first page listed (ids are unique per source only), or why there is none. */
function sampled(samples: readonly SourceSample[], source: string): string | { readonly why: string } {
  const sample = samples.find((s) => s.source === source)
  const first = sample?.results[0]
  if (!sample || !first) return { why: 'no id was given for it and its list was not read' }
  if (first.kind !== 'page') return { why: `no id was given for it and its first page could not be read (${first.kind}: ${first.message})` }
  const record = first.items[0]
  if (!record) return { why: 'no id was given for it and its first page lists no record: it has nothing to write to' }
  return record.id
}

async function probeAction(
  config: ResourceConfig,
  connector: Connector,
  record: SourceRecord,
  source: string,
  name: string,
  action: ResourceConfig['actions'][string],
): Promise<Guarantee & { readonly gone?: true }> {
  const guarantee = (status: Guarantee['status'], detail: string, keys: string[] = []): Guarantee => ({
    name: `write_probe.${name}`,
    promise: PROMISE,
    status,
    detail,
    config_keys: keys,
  })
  // The write sets what is already there: accepted or not, it changes no value.
  const set = Object.fromEntries(Object.keys(action.set).map((field) => [field, record.fields[field]]))
  const write = action.write
  if (connector.kind === 'http') {
    if (!write) return guarantee('unknown', `action "${name}" has no write`, [`actions.${name}.write`])
    if (write.style === 'action') return guarantee('unknown', `action "${name}" calls an endpoint (style: action): a probe cannot make it a no-op, so it is not sent`)
    if (usesParams(write.body)) return guarantee('unknown', `action "${name}"'s body uses action parameters: a probe cannot make it a no-op, so it is not sent`)
  }
  const rendering = { id: record.id, version: STALE_VERSION, params: {}, set }
  const stale = withRepresentation({ ...record, version: STALE_VERSION }, staleRepresentation(record, write))
  let outcome: WriteOutcome
  try {
    outcome = await connector.write({
      id: record.id,
      source,
      expectedVersion: STALE_VERSION,
      set,
      precondition: {},
      current: stale,
      ...(connector.kind === 'http' && write ? { http: renderHttpWrite(write, rendering) } : {}),
    })
  } catch (error) {
    return guarantee('unknown', `the probe write could not be sent: ${error instanceof Error ? error.message : String(error)}`)
  }
  const after = (await connector.readByIds([record.id], undefined, new Map([[record.id, source]]))).records.get(record.id)
  const changed = after ? differs(record, after) : 'the record could not be read back'
  // refused, and the record gone when read back (deleted meanwhile, or the read failed): no change of it can be
  // shown, and a refusal of a record gone is no refusal of its version
  if (outcome.kind === 'conflict' && !after)
    return { ...guarantee('unknown', `the stale write was answered ${outcome.status ?? outcome.reason} and record "${record.id}" could not be read back afterwards (gone, or its read failed). ${KEPT}`), gone: true }
  if (outcome.kind === 'conflict') {
    if (changed) return guarantee('unsafe', `the stale write was refused (${outcome.reason}) but the record changed: ${changed}`)
    // "no such record" from the write, of a record just read by id, is the write path not knowing it (a path
    // with no route that answers JSON, another id scheme), not a refusal of the version: a probe that held
    // would vouch for skipping each target's second read
    if (outcome.reason === 'missing')
      return guarantee(
        'unknown',
        `the stale write was answered ${outcome.status ?? 'not found'} (no such record), though a read by id reads it: that is no refusal of the version, so whether the upstream enforces it is not known; check that the write path names the record the read does`,
        connector.kind === 'http' ? [`actions.${name}.write.path`] : [],
      )
    // sql: the connector moves the version column itself on each write and never answers `written` for one whose
    // version did not move (write.ts `refusal`); what no probe sees is whether the table's other writers move it
    if (connector.kind === 'sql')
      return guarantee(
        'holds',
        `a write with a stale version was refused (${outcome.reason}); the record is unchanged. Each write of Warrant's moves "${config.version_field}" itself, and one whose version did not move is never reported written (refused, or unknown where it had committed). Not probed: that every other writer of the table moves "${config.version_field}" too; a change that leaves it as it was is not seen by a conditional write, so it must be a column that means nothing else (a counter, updated_at), never a business value`,
        ['version_field'],
      )
    // Whether the version moves on every write takes a real write to learn; the executor halts at the first
    // target whose version did not move (effect_unverified), so that is said rather than vouched for.
    return guarantee(
      'holds',
      `a write with a stale version was refused (${outcome.status ?? outcome.reason}); the record is unchanged. Not probed: that the version moves on every write (it takes a real write); an operation halts at its first target whose version did not move`,
    )
  }
  // A 2xx whose body says the request failed, the record unchanged, accepted nothing that can be shown: refused the
  // version or the request, it does not say. Unknown, like unsafe, vouches for nothing (only a probe that held lets an
  // operation skip a target's re-read); a record that changed (or could not be read back) is judged as accepted.
  if (outcome.kind === 'written' && outcome.failureInBody !== undefined && !changed)
    return guarantee(
      'unknown',
      `the stale write was answered ${outcome.status} with a body saying it failed (${outcome.failureInBody}) and the record is unchanged: not an acceptance, and no refusal of the version that can be told from another failure, so whether the upstream enforces the version is not known`,
      [`actions.${name}.write.version`],
    )
  if (outcome.kind === 'written')
    return guarantee(
      'unsafe',
      `the upstream ACCEPTED a write with a stale version (${outcome.status}): it does not enforce the version, so a change made between Warrant's re-read and its write is overwritten${changed ? `; the record changed: ${changed}` : ' (the probe wrote the values already there: nothing changed)'}`,
      [`actions.${name}.write.version`],
    )
  return guarantee('unknown', `the probe write ended ${outcome.kind}: ${'message' in outcome ? outcome.message : ''}`)
}

/** For a replacing write the version travels inside the representation (e.g. `_rev`): make it stale there too. */
function staleRepresentation(record: SourceRecord, write: ResourceConfig['actions'][string]['write']): unknown {
  const representation = (record as { representation?: unknown }).representation ?? record.fields
  const placement = write ? versionPlacementOf(write) : undefined
  if (placement?.in !== 'body' || representation === null || typeof representation !== 'object') return representation
  const copy = structuredClone(representation) as Record<string, unknown>
  const segments = placement.path.split('.')
  let at: Record<string, unknown> = copy
  for (const segment of segments.slice(0, -1)) {
    if (at[segment] === null || typeof at[segment] !== 'object') return copy
    at = at[segment] as Record<string, unknown>
  }
  at[segments[segments.length - 1]!] = STALE_VERSION
  return copy
}

function usesParams(template: unknown): boolean {
  return JSON.stringify(template ?? null).includes('{{params.')
}

function differs(before: SourceRecord, after: SourceRecord): string | null {
  if (after.version !== before.version) return `its version went from "${before.version}" to "${after.version}"`
  const a = JSON.stringify((before as { representation?: unknown }).representation ?? before.fields)
  const b = JSON.stringify((after as { representation?: unknown }).representation ?? after.fields)
  return a === b ? null : 'its fields differ from before the probe'
}
