import { z } from 'zod'
import { WarrantError, type Warning, warningSchema } from '../contract/index.js'
import type { Resource } from './catalogue.js'

export const recordViewSchema = z
  .object({
    resource: z.string(),
    environment: z.string(),
    id: z.string(),
    version: z.string(),
    record: z.record(z.string(), z.unknown()),
    warnings: z.array(warningSchema).describe('PARTIAL_FIELD_SET names every field not returned and why'),
  })
  .meta({ id: 'RecordView' })
export type RecordView = z.infer<typeof recordViewSchema>

/**
 * One record's review fields, and for every field it does not return, why: never a silent omission.
 * An upstream that fails is `upstream_unavailable`, not an empty record; an id not found by a credential that sees
 * only part of the resource is `not_found` saying so, never "no record".
 */
export async function readRecord(resource: Resource, id: string, requested?: readonly string[]): Promise<RecordView> {
  const fields = resource.policy.fields(requested)
  const result = await resource.connector.readByIds([id])
  const failure = result.failed.find((f) => f.id === id)
  if (failure) throw new WarrantError('upstream_unavailable', `the upstream could not read ${id}: ${failure.message}`, { id })
  const record = result.records.get(id)
  if (!record) {
    // a credential that sees part of the resource proves no absence: a search over it is never complete either
    const { restricted, description } = resource.config.visibility
    if (restricted)
      throw new WarrantError(
        'not_found',
        `record "${id}" is not among the records of ${resource.name} (${resource.environment}) this gateway's credential can see (${description}); it may exist outside that visibility`,
        { resource: resource.name, id, visibility_restricted: true },
      )
    throw new WarrantError('not_found', `no record "${id}" in ${resource.name} (${resource.environment})`, { resource: resource.name, id })
  }
  const warning: Warning | null = resource.policy.omissions(record.fields, fields)
  return {
    resource: resource.name,
    environment: resource.environment,
    id: record.id,
    version: record.version,
    record: resource.policy.project(record.fields, fields),
    warnings: warning ? [warning] : [],
  }
}
