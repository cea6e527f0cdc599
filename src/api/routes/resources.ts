import type { OpenAPIHono } from '@hono/zod-openapi'
import { inScope, WarrantError, type Actor } from '../../contract/index.js'
import { z } from 'zod'
import { envelopeSchema } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import { describeResourcesFor, readRecord, recordReadSchema, recordViewSchema, resourceDescriptionSchema, searchRequestSchema, walkResource } from '../../resources/index.js'
import type { ApiEnv } from '../authenticate.js'
import { errors, jsonBody, jsonResponse, v1Route } from './v1-route.js'
import { streamEnvelope } from '../envelope-stream.js'
import { DEFAULT_BUDGET } from '../../inventory/index.js'
import { authorityRecheck } from '../../auth/index.js'

const resourceParam = z.object({ resource: z.string().min(1).max(64) })

const listResources = v1Route({
  method: 'get',
  path: '/v1/resources',
  summary: "Each resource in the token's scope: environment, review and denied fields, and the actions the token may use",
  responses: {
    200: jsonResponse('resources', z.object({ resources: z.array(resourceDescriptionSchema) })),
  },
})

const search = v1Route({
  method: 'post',
  path: '/v1/resources/{resource}/search',
  summary: 'Search a resource; the envelope says whether the result is complete',
  description:
    "Answered as it is read: the items first, then the envelope's end (status, complete, incomplete_reasons, continuation). A body without that end was cut (a fault; a client that read nothing for server.stream_stall_timeout_ms, default 60 s, whose audit row says stopped client_stalled; or a token revoked, expired, its principal disabled or the resource taken out of its scope while the walk ran, asked again at most once a second, stopped authority_lapsed) and is no answer. A client that stops reading holds the walk only until budget.deadline_ms: the walk then ends on its deadline, its upstream read released, and the end waits after the items.",
  request: {
    params: resourceParam,
    body: jsonBody(searchRequestSchema),
  },
  responses: {
    200: jsonResponse('the envelope (complete or partial, with reasons and a continuation)', envelopeSchema),
    ...errors([400, 401, 403, 404]),
  },
})

const readOne = v1Route({
  method: 'get',
  path: '/v1/resources/{resource}/records/{id}',
  summary: "One record's review fields; every field not returned is named with its reason",
  request: {
    params: resourceParam.extend({ id: z.string().min(1).max(512) }),
    query: recordReadSchema,
  },
  responses: {
    200: jsonResponse('the record', recordViewSchema),
    ...errors([400, 401, 404, 409, 502]),
  },
})

// The same read with the id in the query: an id that is a dot segment (`.`, `..`) cannot travel in a path, since
// URL parsers resolve it away even percent-encoded (see dot-segments.ts)
const readOneByQuery = v1Route({
  method: 'get',
  path: '/v1/resources/{resource}/records',
  summary: "One record's review fields, the id given in the query (any id, `.` and `..` included)",
  request: {
    params: resourceParam,
    query: recordReadSchema.extend({ id: z.string().min(1).max(512).describe("the record's id") }),
  },
  responses: {
    200: jsonResponse('the record', recordViewSchema),
    ...errors([400, 401, 404, 409, 502]),
  },
})

/** The resource, if the actor's scope covers it; `forbidden` otherwise (and `not_found` for an unknown one). */
export function scopedResource(gateway: Gateway, actor: Actor, name: string) {
  const resource = gateway.catalogue.get(name)
  if (!inScope(actor, name)) throw new WarrantError('forbidden', `resource "${name}" is outside this token's scope`, { resource: name })
  return resource
}

export function registerResourceRoutes(app: OpenAPIHono<ApiEnv>, gateway: Gateway): void {
  app.openapi(listResources, (c) => c.json({ resources: describeResourcesFor(gateway.catalogue, c.get('actor')) }, 200))

  app.openapi(search, async (c) => {
    const resource = scopedResource(gateway, c.get('actor'), c.req.valid('param').resource)
    const request = c.req.valid('json')
    // answered as it is read: a full search is never held whole (envelope-stream.ts says what a client can rely on)
    return (await streamEnvelope(
      c,
      (onPage, signal) => walkResource(resource, request, { cursorCodec: gateway.cursorCodec, signal, beforePage: authorityRecheck(gateway.principals, c.get('actor'), resource.name) }, onPage),
      (error) => gateway.log.error({ err: error, resource: resource.name }, 'search: the walk failed after its answer began; the connection was cut'),
      { stallMs: gateway.config.server.stream_stall_timeout_ms, deadlineMs: request.budget?.deadline_ms ?? DEFAULT_BUDGET.deadlineMs },
    )) as never
  })

  app.openapi(readOne, async (c) => {
    const { resource: name, id } = c.req.valid('param')
    const { fields, source } = c.req.valid('query')
    return c.json(await readRecord(scopedResource(gateway, c.get('actor'), name), id, fields, source), 200)
  })
  app.openapi(readOneByQuery, async (c) => {
    const { id, fields, source } = c.req.valid('query')
    return c.json(await readRecord(scopedResource(gateway, c.get('actor'), c.req.valid('param').resource), id, fields, source), 200)
  })
}
