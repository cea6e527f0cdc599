import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Gateway } from '../../gateway/index.js'
import {
  approvalRequestSchema,
  approvalResultSchema,
  changesPageSchema,
  changesQuerySchema,
  planProposalSchema,
  planViewSchema,
  proposePlanRequestSchema,
} from '../../plans/index.js'
import type { ApiEnv } from '../authenticate.js'
import { errors, idParam, jsonBody, jsonResponse, v1Route } from './v1-route.js'


const propose = v1Route({
  method: 'post',
  path: '/v1/selections/{id}/plans',
  summary: 'Propose one action on a frozen selection: before → after per field, plan digest, the approval the policy requires',
  request: { params: idParam, body: jsonBody(proposePlanRequestSchema) },
  responses: {
    201: jsonResponse('the new plan', planProposalSchema),
    200: jsonResponse('the same action was already proposed on this selection: that plan', planProposalSchema),
    ...errors([400, 401, 403, 404, 409, 410]),
  },
})

const show = v1Route({
  method: 'get',
  path: '/v1/plans/{id}',
  summary: 'A plan and its approval state: who approved, until when, who is still needed',
  request: { params: idParam },
  responses: { 200: jsonResponse('the plan', planViewSchema), ...errors([401, 403, 404]) },
})

const changes = v1Route({
  method: 'get',
  path: '/v1/plans/{id}/changes',
  summary: 'Per-record before → after, page by page, in the selection order',
  request: { params: idParam, query: changesQuerySchema },
  responses: { 200: jsonResponse('a page of record changes', changesPageSchema), ...errors([400, 401, 403, 404]) },
})

const approve = v1Route({
  method: 'post',
  path: '/v1/plans/{id}/approvals',
  summary: 'A reviewer approves or rejects the exact plan digest they saw',
  request: { params: idParam, body: jsonBody(approvalRequestSchema) },
  responses: {
    201: jsonResponse('the decision, recorded', approvalResultSchema),
    200: jsonResponse('this reviewer had already approved this digest and that approval stands: it, unchanged (counted: false)', approvalResultSchema),
    ...errors([400, 401, 403, 404, 409, 410]),
  },
})

export function registerPlanRoutes(app: OpenAPIHono<ApiEnv>, gateway: Gateway): void {
  app.openapi(propose, async (c) => {
    const plan = await gateway.plans.propose(c.get('actor'), c.req.valid('param').id, c.req.valid('json'))
    return plan.created ? c.json(plan, 201) : c.json(plan, 200)
  })

  app.openapi(show, async (c) => c.json(await gateway.plans.view(c.get('actor'), c.req.valid('param').id), 200))

  app.openapi(changes, async (c) => {
    const { cursor, limit } = c.req.valid('query')
    return c.json(await gateway.plans.changes(c.get('actor'), c.req.valid('param').id, { ...(cursor === undefined ? {} : { cursor }), limit }), 200)
  })

  app.openapi(approve, async (c) => {
    const result = await gateway.plans.decide(c.get('actor'), c.req.valid('param').id, c.req.valid('json'))
    return result.counted || result.decision === 'reject' ? c.json(result, 201) : c.json(result, 200)
  })
}
