import { z } from 'zod'
import { scopedResource } from '../../api/routes/resources.js'
import { authorityRecheck } from '../../auth/index.js'
import { type Envelope, envelopeSchema } from '../../contract/index.js'
import { describeResourcesFor, resourceDescriptionSchema, searchRequestSchema, searchResource } from '../../resources/index.js'
import { collectionSummary, plural } from '../summaries.js'
import { defineTool, READ_ONLY, RULES_BRIEF } from '../tool.js'

/** The resource path parameter of the HTTP routes, as a tool argument. */
export const resourceNameSchema = z.string().min(1).max(64).describe('from list_resources')

/**
 * The item budget of a search that names none: about 20 KB of records, sized for an agent's context window
 * (a search of the demo resource without one answered 2,000 records, 390 KB). The walk stops there as
 * CLIENT_LIMIT_REACHED with a cursor; `budget.max_items` raises it, per call. HTTP keeps its own default,
 * for programs that page through everything.
 */
export const MCP_SEARCH_DEFAULT_MAX_ITEMS = 100

const searchInput = z.strictObject({
  resource: resourceNameSchema,
  ...searchRequestSchema.shape,
  budget: searchRequestSchema.shape.budget.describe(
    `limits; max_items defaults to ${MCP_SEARCH_DEFAULT_MAX_ITEMS} here; a stopped walk is incomplete, with a cursor`,
  ),
})

const resourceList = z.object({ resources: z.array(resourceDescriptionSchema) })

export const listResources = defineTool({
  name: 'list_resources',
  title: 'List resources',
  // Same answer as GET /v1/resources.
  description: "The resources this token may use: environment (where changes land), review and denied fields, and the actions this token may use, with params and preconditions.",
  input: z.strictObject({}),
  output: resourceList,
  annotations: { ...READ_ONLY },
  async run(_args, { gateway, actor }) {
    return { resources: describeResourcesFor(gateway.catalogue, actor) }
  },
  summarize(result) {
    if (result.resources.length === 0) return 'COMPLETE: no resource is in this token\'s scope: there is nothing this agent may read or change. Ask the person for a token scoped to the resource you need.'
    const lines = result.resources.map((r) => `- ${r.name} → ${r.environment}; actions this token may use: ${r.actions.map((a) => a.name).join(', ') || '(none: read only)'}`)
    return [`COMPLETE: ${plural(result.resources.length, 'resource')} in this token's scope (every configured resource it covers):`, ...lines].join('\n')
  },
})

export const search = defineTool({
  name: 'search',
  title: 'Search a resource',
  // Same answer as POST /v1/resources/{resource}/search, except the default item budget.
  description: [
    `Search a resource: items with complete, incomplete_reasons, continuation. At most ${MCP_SEARCH_DEFAULT_MAX_ITEMS} items unless budget.max_items says more; a stopped walk is incomplete (CLIENT_LIMIT_REACHED): continue with the same arguments and cursor = continuation.cursor.`,
    RULES_BRIEF,
  ].join('\n'),
  input: searchInput,
  output: envelopeSchema,
  annotations: { ...READ_ONLY },
  async run({ resource, ...request }, { gateway, actor, signal, walk }): Promise<Envelope> {
    const budget = { ...request.budget, max_items: request.budget.max_items ?? MCP_SEARCH_DEFAULT_MAX_ITEMS }
    const recheck = authorityRecheck(gateway.principals, actor, resource)
    if (walk) walk.walked = true
    // the client's cancel stops the walk: no page is asked for after it (the one in flight is abandoned)
    const envelope = await searchResource(scopedResource(gateway, actor, resource), { ...request, budget }, {
      cursorCodec: gateway.cursorCodec,
      ...(signal ? { signal } : {}),
      beforePage: async () => {
        if (walk) walk.pages += 1
        await recheck()
      },
    })
    if (walk) walk.finished = true
    return envelope
  },
  summarize(envelope, args) {
    return collectionSummary(envelope, envelope.items.length, `${args.resource} (${envelope.scope.environment})`, 'record', envelope.page.walk_returned)
  },
})
