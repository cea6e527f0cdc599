import type { OpenAPIHono } from '@hono/zod-openapi'
import { z } from 'zod'
import { principalListSchema, principalStatusAnswerSchema, principalStatusRequestSchema, statusAuditDetails, statusReason } from '../../auth/index.js'
import { type Actor, WarrantError } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import type { ApiEnv } from '../authenticate.js'
import { errors, jsonResponse, v1Route } from './v1-route.js'

const nameParam = z.object({ name: z.string().min(1).max(200).describe("the principal's name, as `warrant principal list` shows it") })

/** The body is optional on enable (no reason needed) and parsed the same on disable, where a missing reason is 400 naming it. */
const statusBody = { required: false, content: { 'application/json': { schema: principalStatusRequestSchema } } }

const list = v1Route({
  method: 'get',
  path: '/v1/principals',
  summary: 'Every principal (admin only): role, whether it is disabled, its last disable, how many live tokens (never their values)',
  responses: { 200: jsonResponse('the principals', principalListSchema), ...errors([401, 403]) },
})

const statusRoute = (verb: 'disable' | 'enable', summary: string) =>
  v1Route({
    method: 'post',
    path: `/v1/principals/{name}/${verb}`,
    summary,
    request: { params: nameParam, body: statusBody },
    responses: { 200: jsonResponse('what changed (changed: false when it already stood so)', principalStatusAnswerSchema), ...errors([400, 401, 403, 404]) },
  })

const disable = statusRoute(
  'disable',
  "Disable a principal (admin only; reason required): its tokens are refused from the next request on, its approvals and those on plans it proposed stop counting, for good",
)
const enable = statusRoute('enable', 'Enable a principal again (admin only): its live tokens work; what was decided before its disable stays void')

/**
 * What `warrant principal list | disable | enable` does, for an admin holding a token rather than the store. An
 * admin only: a reviewer who could disable the other reviewers could leave themselves the only approver. A
 * disabled admin's token is refused at the door like any other, so it cannot enable itself. Each change's audit row
 * carries what the CLI's carries (`statusAuditDetails`).
 */
export function registerPrincipalRoutes(app: OpenAPIHono<ApiEnv>, gateway: Gateway): void {
  app.openapi(list, async (c) => {
    adminOnly(c.get('actor'))
    return c.json({ principals: await gateway.principals.listPrincipals() }, 200)
  })
  for (const [verb, route] of [
    ['disable', disable],
    ['enable', enable],
  ] as const)
    app.openapi(route, async (c) => {
      adminOnly(c.get('actor'))
      const reason = statusReason((c.req.valid('json') as { reason?: string } | undefined)?.reason, verb === 'disable', 'reason')
      const change = await gateway.principals[verb](c.req.valid('param').name)
      c.set('audit_details', statusAuditDetails(verb, change, reason))
      return c.json({ ...change, reason }, 200)
    })
}

function adminOnly(actor: Actor): void {
  if (actor.role !== 'admin') throw new WarrantError('forbidden', `principals are listed, disabled and enabled by an admin token; this token is an ${actor.role}'s`, { role: actor.role })
}
