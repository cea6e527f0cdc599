import { OpenAPIHono } from '@hono/zod-openapi'
import type { Gateway } from '../gateway/index.js'
import { mcpDoorRefusal, registerMcpEndpoint } from '../mcp/http-transport.js'
import { auditTrail } from './audit-trail.js'
import { inputGuard } from './input-guard.js'
import { type ApiEnv, authenticate } from './authenticate.js'
import { asWarrantError, fromZodError, toErrorResponse } from './error-mapping.js'
import { observeRequests, registerMetricsRoute } from './metrics.js'
import { refuseDuplicateKeys } from './unique-keys.js'
import { methodsAt } from './route-methods.js'
import { WarrantError } from '../contract/index.js'
import { registerAuditRoutes } from './routes/audit.js'
import { registerOperationRoutes } from './routes/operations.js'
import { registerResourceRoutes } from './routes/resources.js'
import { registerPlanRoutes } from './routes/plans.js'
import { registerPrincipalRoutes } from './routes/principals.js'
import { registerSelectionRoutes } from './routes/selections.js'
import { registerReviewPages, reviewRefusalPage } from '../ui/index.js'

export interface AppOptions {
  readonly gateway: Gateway
}

export type App = OpenAPIHono<ApiEnv>

/**
 * The HTTP API. Routes parse input with the same zod schemas the services and MCP tools use, call one
 * service, and render its result; errors map to statuses in exactly one place.
 *
 * @example serve({ fetch: createApp({ gateway }).fetch, port: 8787 })
 */
export function createApp(options: AppOptions): App {
  const { gateway } = options
  const app = new OpenAPIHono<ApiEnv>({
    defaultHook: (result) => {
      if (!result.success) throw fromZodError(result.error, result.target === 'json' ? 'request body' : `request ${result.target}`)
    },
  })
  app.onError((error, c) => {
    gateway.telemetry.add('warrant_refusals_total', { surface: 'http', code: asWarrantError(error)?.code ?? 'internal' })
    return toErrorResponse(error, c, gateway.log)
  })
  app.use('*', observeRequests(gateway))
  app.notFound((c) => {
    // a path some route has, asked with another method: 405 with Allow (RFC 9110), not "no route", which sends a
    // client looking for another URL
    const allowed = methodsAt(app, c.req.path)
    if (allowed.length > 0) {
      const refusal = new WarrantError('method_not_allowed', `${c.req.method} is not a method of ${c.req.path}; it takes ${allowed.join(', ')}`, { method: c.req.method, allowed })
      return c.json(refusal.toBody(), 405, { Allow: allowed.join(', ') })
    }
    return c.json({ error: { code: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404)
  })

  registerMetricsRoute(app, gateway)
  // First: every request below is recorded, on every surface this app carries, refusals included.
  app.use('*', auditTrail(gateway))
  // Then the door: size, depth, NUL and lone surrogates refused before any route reads the request.
  // the review pages are read in a browser: their refusals are a small HTML page, the API's the JSON error body
  for (const guard of inputGuard({ maxBodyBytes: gateway.config.server.max_body_bytes })) app.use('/v1/*', guard)
  for (const guard of inputGuard({ maxBodyBytes: gateway.config.server.max_body_bytes, refusalPage: reviewRefusalPage })) app.use('/review/*', guard)
  for (const guard of inputGuard({ maxBodyBytes: gateway.config.server.max_body_bytes, routeInspectsJson: true, refusalBody: mcpDoorRefusal })) app.use('/mcp', guard)
  // the store is asked: a SQLite file removed or replaced (a stat), a PostgreSQL database that does not answer
  // one trivial query within a short timeout (dropped, its server down or silent) is a gateway that is not healthy
  app.get('/health', async (c) => {
    const unavailable = await gateway.store.reachable()
    if (unavailable !== null) return c.json({ status: 'unavailable', store: gateway.store.dialect, ...unavailable.toBody() }, 503)
    return c.json({ status: 'ok', store: gateway.store.dialect, resources: gateway.catalogue.names })
  })
  app.use('/v1/*', authenticate(gateway), refuseDuplicateKeys)
  registerMcpEndpoint(app, gateway)
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' })
  registerResourceRoutes(app, gateway)
  registerSelectionRoutes(app, gateway)
  registerPlanRoutes(app, gateway)
  registerOperationRoutes(app, { operations: gateway.operations })
  registerAuditRoutes(app, { audit: gateway.audit })
  registerPrincipalRoutes(app, gateway)
  registerReviewPages(app, gateway)

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    security: [{ bearer: [] }],
    info: {
      title: 'Warrant',
      version: '0.1.0',
      description:
        'Every collection says, as data, whether it is complete. An empty list proves absence only when `complete` is true. Bulk changes run only on frozen, approved selections.',
    },
  })
  return app
}
