import { z } from 'zod'
import { type Actor, inScope } from '../contract/index.js'
import type { Catalogue, Resource } from './catalogue.js'

export const resourceDescriptionSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    environment: z.string().describe('where writes land: name, account, host'),
    connector: z.enum(['sql', 'http']),
    sources: z.array(z.string()),
    id_field: z.string(),
    review_fields: z.array(z.object({ name: z.string(), type: z.string() })),
    denied_fields: z.array(z.string()).describe('never leave the gateway; cannot be requested or filtered on'),
    group_by: z.array(z.string()),
    visibility: z.object({ description: z.string(), restricted: z.boolean() }),
    actions: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        params: z.record(z.string(), z.object({ type: z.string(), required: z.boolean(), description: z.string().optional() })),
        sets: z.array(z.string()),
        precondition: z.record(z.string(), z.unknown()),
        reversible: z.boolean(),
      }),
    ).describe("the actions this token may use here (its action scope); the resource's other actions are not listed"),
  })
  .meta({ id: 'ResourceDescription' })
export type ResourceDescription = z.infer<typeof resourceDescriptionSchema>

/**
 * The resources an actor's scope covers, each with only the actions its scope allows: what GET /v1/resources
 * and the MCP tool list_resources answer, so an agent is not shown actions it would be refused.
 */
export function describeResourcesFor(catalogue: Catalogue, actor: Actor): ResourceDescription[] {
  return catalogue
    .list()
    .filter((r) => inScope(actor, r.name))
    .map((r) => {
      const described = describeResource(r)
      return { ...described, actions: described.actions.filter((a) => inScope(actor, r.name, a.name)) }
    })
}

/** A resource as agents and reviewers see it: no URL, no credential, no table name. */
export function describeResource(resource: Resource): ResourceDescription {
  const c = resource.config
  return {
    name: resource.name,
    description: c.description,
    environment: resource.environment,
    connector: c.connector.kind,
    sources: [...resource.connector.sources],
    id_field: c.id_field,
    review_fields: c.review_fields.map((name) => ({ name, type: c.fields[name]! })),
    denied_fields: c.denied_fields,
    group_by: c.group_by,
    visibility: c.visibility,
    actions: Object.entries(c.actions).map(([name, a]) => ({
      name,
      description: a.description,
      params: a.params,
      sets: Object.keys(a.set),
      precondition: a.precondition,
      reversible: a.reversible,
    })),
  }
}
