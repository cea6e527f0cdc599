import type { OpenAPIHono } from '@hono/zod-openapi'
import { z } from 'zod'
import {
  bulkActionBodySchema,
  commitReceiptSchema,
  FINISHED_STATES,
  operationViewSchema,
  reconcileReportSchema,
  resultsPageSchema,
  TARGET_STATES,
  type OperationService,
} from '../../operations/index.js'
import { cursorArgument, queryInteger } from '../../contract/index.js'
import { idempotencyKeyOf } from '../idempotency-key.js'
import type { ApiEnv } from '../authenticate.js'
import { errors, idParam, jsonBody, jsonResponse, v1Route } from './v1-route.js'

export interface OperationRouteDeps {
  readonly operations: OperationService
}

const idempotencyHeader = z.object({
  'idempotency-key': z.string().optional().describe('required: the same key always names the same operation; a missing one is 400 idempotency_key_missing'),
})
const receipt = {
  202: jsonResponse('a new operation; execution has started', commitReceiptSchema),
  200: jsonResponse('the operation this Idempotency-Key already names (same request)', commitReceiptSchema),
}

const commitPlan = v1Route({
  method: 'post',
  path: '/v1/plans/{id}/commit',
  summary: 'Commit an approved plan; the executor writes target by target and records each outcome',
  request: {
    params: idParam,
    headers: idempotencyHeader,
    body: jsonBody(
      z.strictObject({
        expected_digest: z.string().min(1).max(200).describe("required: the plan digest the reviewer approved (the selection's digest is also accepted); a missing one is 400, a different one 409"),
      }),
    ),
  },
  responses: { ...receipt, ...errors([400, 401, 403, 404, 409, 410, 422]) },
})

const bulkActions = v1Route({
  method: 'post',
  path: '/v1/resources/{resource}/bulk-actions',
  summary: "The article's commit form: a frozen selection, its digest and the canonical action it was approved for",
  request: {
    params: z.object({ resource: z.string().min(1).max(64) }),
    headers: idempotencyHeader,
    // the service's own schema: an empty id or digest is refused here, naming the field, as the document says
    body: jsonBody(bulkActionBodySchema),
  },
  responses: { ...receipt, ...errors([400, 401, 403, 404, 409, 410, 422]) },
})

const getOperation = v1Route({
  method: 'get',
  path: '/v1/operations/{id}',
  summary: 'An operation: state, counts per outcome, halt reason, stop rules',
  request: {
    params: idParam,
    query: z.strictObject({
      wait_ms: queryInteger({ min: 0, max: 30_000 }).optional().describe('wait up to this long for the operation to finish before answering (as get_operation does on MCP)'),
    }),
  },
  responses: { 200: jsonResponse('the operation', operationViewSchema), ...errors([401, 403, 404]) },
})

const listResults = v1Route({
  method: 'get',
  path: '/v1/operations/{id}/results',
  summary: 'Per-target outcomes in member order, paged by cursor, optionally one outcome',
  request: {
    params: idParam,
    // strict: an unknown parameter (`state=failed`) would be dropped and every outcome answered
    query: z.strictObject({
      outcome: z.enum(TARGET_STATES).optional(),
      cursor: cursorArgument(1000).optional().describe('next_cursor of the previous page; leave it out for the first'),
      limit: queryInteger({ min: 1, max: 1000 }).optional().describe('results per page, 1..1000; default 100'),
    }),
  },
  responses: { 200: jsonResponse('a page of results', resultsPageSchema), ...errors([400, 401, 403, 404]) },
})

const reconcile = v1Route({
  method: 'post',
  path: '/v1/operations/{id}/reconcile',
  summary: 'Re-read every unknown target and record what the upstream now holds (never writes)',
  request: { params: idParam },
  responses: { 200: jsonResponse('what was found', reconcileReportSchema), ...errors([401, 403, 404]) },
})

const compensation = v1Route({
  method: 'post',
  path: '/v1/operations/{id}/compensation',
  summary: "Propose a plan restoring each target the operation changed (succeeded, or changed otherwise than approved) to its before-value; it needs approval like any plan",
  request: { params: idParam },
  responses: {
    201: jsonResponse('the compensation plan', z.record(z.string(), z.unknown())),
    200: jsonResponse('the open compensation plan this operation already has (the same object)', z.record(z.string(), z.unknown())),
    ...errors([401, 403, 404, 409]),
  },
})

const remainder = v1Route({
  method: 'post',
  path: '/v1/operations/{id}/remainder',
  summary:
    "Propose the rest of a finished (halted) operation: a plan of the same action, params and environment over exactly its pending targets at their frozen versions (the rest of a compensation: a compensation of the same original operation over them, their before-values copied from the halted plan); it needs approval like any plan. 409 while it runs, while a target is unknown (reconcile first), or with nothing pending",
  request: { params: idParam },
  responses: {
    201: jsonResponse('the remainder plan', z.record(z.string(), z.unknown())),
    200: jsonResponse('the open remainder plan this operation already has (the same object)', z.record(z.string(), z.unknown())),
    ...errors([401, 403, 404, 409]),
  },
})

export function registerOperationRoutes(app: OpenAPIHono<ApiEnv>, deps: OperationRouteDeps): void {
  const { operations } = deps

  app.openapi(commitPlan, async (c) => {
    // The service refuses a missing digest too: a body sent without a JSON content type skips the route's schema.
    const body = (c.req.valid('json') as { expected_digest?: string } | undefined) ?? {}
    const result = await operations.commitPlan(c.get('actor'), c.req.valid('param').id, {
      idempotencyKey: idempotencyKeyOf(c),
      expectedDigest: body.expected_digest ?? null,
    })
    return result.created ? c.json(result, 202) : c.json(result, 200)
  })

  app.openapi(bulkActions, async (c) => {
    const result = await operations.commitBulkAction(c.get('actor'), c.req.valid('param').resource, {
      idempotencyKey: idempotencyKeyOf(c),
      body: c.req.valid('json'),
    })
    return result.created ? c.json(result, 202) : c.json(result, 200)
  })

  app.openapi(getOperation, async (c) => {
    const id = c.req.valid('param').id
    const waitMs = c.req.valid('query').wait_ms ?? 0
    const view = await operations.get(c.get('actor'), id)
    if (waitMs === 0 || FINISHED_STATES.has(view.state)) return c.json(view, 200)
    await operations.waitFor(id, waitMs)
    return c.json(await operations.get(c.get('actor'), id), 200)
  })

  app.openapi(listResults, async (c) => {
    const query = c.req.valid('query')
    const page = await operations.results(c.get('actor'), c.req.valid('param').id, {
      ...(query.outcome ? { outcome: query.outcome } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
      ...(query.limit ? { limit: query.limit } : {}),
    })
    return c.json(page as z.infer<typeof resultsPageSchema>, 200)
  })

  app.openapi(reconcile, async (c) => c.json((await operations.reconcile(c.get('actor'), c.req.valid('param').id)) as z.infer<typeof reconcileReportSchema>, 200))

  app.openapi(compensation, async (c) => {
    const proposal = (await operations.proposeCompensation(c.get('actor'), c.req.valid('param').id)) as Record<string, unknown>
    // the operation's open compensation plan, proposed before: the same object, not a new one
    return proposal.created === false ? c.json(proposal, 200) : c.json(proposal, 201)
  })

  app.openapi(remainder, async (c) => {
    const proposal = (await operations.proposeRemainder(c.get('actor'), c.req.valid('param').id)) as Record<string, unknown>
    return proposal.created === false ? c.json(proposal, 200) : c.json(proposal, 201)
  })
}
