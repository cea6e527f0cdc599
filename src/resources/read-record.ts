import { z } from 'zod'
import { decimalOf, fieldListText, quotedKey, WarrantError, type Warning, warningSchema, wholeDecimal } from '../contract/index.js'
import type { Resource } from './catalogue.js'

export const recordViewSchema = z
  .object({
    resource: z.string(),
    environment: z.string(),
    source: z.string().describe("the source the record was read from: with its id, the record's address"),
    id: z.string(),
    version: z.string(),
    record: z.record(z.string(), z.unknown()),
    warnings: z.array(warningSchema).describe('PARTIAL_FIELD_SET names every field not returned and why'),
  })
  .meta({ id: 'RecordView' })
export type RecordView = z.infer<typeof recordViewSchema>

/** What a read of one record may say besides its id: the fields, and the source to read it from. */
export const recordReadSchema = z.strictObject({
  fields: fieldListText().optional().describe('comma-separated review fields, each once'),
  source: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe("the source to read it from (the resource's `sources`), alone; without one every source is asked, and an id several hold is refused naming them"),
})

/**
 * One record's review fields, and for every field it does not return, why: never a silent omission.
 * A record's address is (source, id): `source` reads it there alone; without one every source is asked, and an id
 * several hold is `conflict` naming them (which one is meant is the caller's to say), never one of them.
 * An upstream that fails is `upstream_unavailable`, not an empty record (on another source than the one that holds
 * the id too: that one may hold it as well); an id not found by a credential that sees only part of the resource is
 * `not_found` saying so, never "no record". An id no value of the id field's declared type shows as ("abc" for an
 * integer id) is refused before any upstream call: asked, an upstream's "no route" 404 read as "no record", an
 * absence no read established.
 */
export async function readRecord(resource: Resource, id: string, requested?: readonly string[], source?: string): Promise<RecordView> {
  const fields = resource.policy.fields(requested)
  refuseMistypedId(resource, id)
  const declared = resource.connector.sources
  if (source !== undefined && !declared.includes(source))
    throw new WarrantError('invalid_request', `source ${quotedKey(source)} is not one of ${resource.name}'s sources (${declared.map((s) => `"${s}"`).join(', ')})`, {
      resource: resource.name,
      source,
      sources: declared,
    })
  const result = await resource.connector.readByIds([id], undefined, source === undefined ? undefined : new Map([[id, source]]))
  const failure = result.failed.find((f) => f.id === id)
  if (failure?.heldBy !== undefined) {
    const named = failure.heldBy.map((s) => `"${s}"`)
    throw new WarrantError(
      'conflict',
      `id ${quotedKey(id)} names a record on each of the sources ${named.slice(0, -1).join(', ')} and ${named.at(-1)} of ${resource.name} (${resource.environment}): they are different records, and an id alone does not say which is meant; name the source (source=${failure.heldBy[0]})`,
      { resource: resource.name, id, sources: failure.heldBy },
    )
  }
  // an id no record here can have ("abc" for a uuid column, another spelling of a stored id): the asker's to fix
  if (failure?.idRefused) throw new WarrantError('invalid_request', `no record of ${resource.name} can be read as ${quotedKey(id)}: ${failure.message}`, { resource: resource.name, id })
  if (failure)
    throw new WarrantError('upstream_unavailable', `the upstream could not read ${id}: ${failure.message}`, {
      id,
      ...(source === undefined ? {} : { source }),
      // what the upstream answered, and a 429's or 503's wait: the read is worth asking again then
      ...(failure.status === undefined ? {} : { status: failure.status }),
      ...(failure.retryAfterSeconds === undefined ? {} : { retry_after_seconds: failure.retryAfterSeconds }),
    })
  const record = result.records.get(id)
  const where = source === undefined ? '' : ` on source "${source}"`
  if (!record) {
    // a credential that sees part of the resource proves no absence: a search over it is never complete either
    const { restricted, description } = resource.config.visibility
    if (restricted)
      throw new WarrantError(
        'not_found',
        `record "${id}" is not among the records of ${resource.name} (${resource.environment})${where} this gateway's credential can see (${description}); it may exist outside that visibility`,
        { resource: resource.name, id, visibility_restricted: true, ...(source === undefined ? {} : { source }) },
      )
    throw new WarrantError('not_found', `no record "${id}" in ${resource.name} (${resource.environment})${where}`, { resource: resource.name, id, ...(source === undefined ? {} : { source }) })
  }
  const from = source ?? result.sources?.get(id) ?? (declared.length === 1 ? declared[0] : undefined)
  if (from === undefined) throw new WarrantError('internal', `the connector of ${resource.name} read "${id}" without saying from which of its sources`)
  const warning: Warning | null = resource.policy.omissions(record.fields, fields)
  return {
    resource: resource.name,
    environment: resource.environment,
    source: from,
    id: record.id,
    version: record.version,
    record: resource.policy.project(record.fields, fields),
    warnings: warning ? [warning] : [],
  }
}

/**
 * Refuses an id whose text no id of the declared type is shown as: a number id is a decimal numeral, an integer one
 * a whole one, as the connectors judge a record's values (sql page-judge.ts; "1.00" is a whole decimal column's 1).
 * Other types are left to the upstream: their ids' spellings depend on the column (a MySQL boolean shows as "1").
 */
function refuseMistypedId(resource: Resource, id: string): void {
  const field = resource.config.id_field
  const type = resource.config.fields[field]
  const fits = type === 'integer' ? wholeDecimal(id) : type === 'number' ? decimalOf(id) !== null : true
  if (fits) return
  throw new WarrantError(
    'invalid_request',
    `id ${quotedKey(id)} cannot name a record of ${resource.name}: its id field "${field}" is declared ${type}, and ${quotedKey(id)} is not ${type === 'integer' ? 'an integer' : 'a number'}; no upstream was asked`,
    { resource: resource.name, field, type, id },
  )
}
