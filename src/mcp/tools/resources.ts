import { z } from 'zod'
import { scopedResource } from '../../api/routes/resources.js'
import { type Envelope, envelopeSchema, inScope } from '../../contract/index.js'
import { describeResource, resourceDescriptionSchema, searchRequestSchema, searchResource } from '../../resources/index.js'
import { collectionSummary, plural } from '../summaries.js'
import { AGENT_RULES, defineTool, READ_ONLY } from '../tool.js'

/** The resource path parameter of the HTTP routes, as a tool argument. */
export const resourceNameSchema = z.string().min(1).max(64).describe('a resource name, as list_resources gives it')

const resourceList = z.object({ resources: z.array(resourceDescriptionSchema) })

export const listResources = defineTool({
  name: 'list_resources',
  title: 'List resources',
  description: [
    "The resources this token may use: each one's environment (where a change would land), review fields, denied fields (never requestable), group-by fields and actions (with their parameters and preconditions).",
    'Same answer as GET /v1/resources.',
    AGENT_RULES,
  ].join('\n'),
  input: z.strictObject({}),
  output: resourceList,
  annotations: { title: 'List resources', ...READ_ONLY },
  async run(_args, { gateway, actor }) {
    return { resources: gateway.catalogue.list().filter((r) => inScope(actor, r.name)).map(describeResource) }
  },
  summarize(result) {
    if (result.resources.length === 0) return 'COMPLETE: no resource is in this token\'s scope: there is nothing this agent may read or change. Ask the person for a token scoped to the resource you need.'
    const lines = result.resources.map((r) => `- ${r.name} → ${r.environment}; actions: ${r.actions.map((a) => a.name).join(', ') || '(none)'}`)
    return [`COMPLETE: ${plural(result.resources.length, 'resource')} in this token's scope (every configured resource it covers):`, ...lines].join('\n')
  },
})

export const search = defineTool({
  name: 'search',
  title: 'Search a resource',
  description: [
    'Search one resource and get the envelope: items plus `complete`, `incomplete_reasons`, `continuation`, `scope` and `warnings`. The walk goes to a terminal state within `budget`; if a budget, a source or the upstream stops it, `complete` is false and the reasons say why.',
    'To continue a partial result, call again with the same arguments and `cursor` set to `continuation.cursor` exactly as given.',
    'Same answer as POST /v1/resources/{resource}/search.',
    AGENT_RULES,
  ].join('\n'),
  input: z.strictObject({ resource: resourceNameSchema, ...searchRequestSchema.shape }),
  output: envelopeSchema,
  annotations: { title: 'Search a resource', ...READ_ONLY },
  async run({ resource, ...request }, { gateway, actor }): Promise<Envelope> {
    return searchResource(scopedResource(gateway, actor, resource), request, { cursorCodec: gateway.cursorCodec })
  },
  summarize(envelope, args) {
    return collectionSummary(envelope, envelope.items.length, `${args.resource} (${envelope.scope.environment})`, 'record', envelope.page.walk_returned)
  },
})
