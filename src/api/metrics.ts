import { Hono, type MiddlewareHandler } from 'hono'
import { routePath } from 'hono/route'
import { WarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { type ApiEnv, authenticate } from './authenticate.js'
import type { App } from './app.js'

/**
 * One span per HTTP request, and its count and latency by method, route template and status. The route is
 * the template (`/v1/plans/:id/commit`), never the path: a path carries ids.
 */
export function observeRequests(gateway: Gateway): MiddlewareHandler {
  return (c, next) => {
    const started = performance.now()
    return gateway.telemetry.span('warrant.http.request', { 'http.request.method': c.req.method }, async () => {
      try {
        await next()
      } finally {
        const route = routePath(c, -1) || 'unmatched'
        const status = String(c.res.status)
        gateway.telemetry.annotate({ 'http.route': route, 'http.response.status_code': c.res.status })
        gateway.telemetry.add('warrant_http_requests_total', { method: c.req.method, route, status })
        gateway.telemetry.observe('warrant_http_request_duration_seconds', { method: c.req.method, route }, (performance.now() - started) / 1000)
      }
    })
  }
}

/** `GET /metrics` on the API's port: for an admin token only (metrics describe every resource). */
export function registerMetricsRoute(app: App, gateway: Gateway): void {
  app.use('/metrics', authenticate(gateway))
  app.get('/metrics', async (c) => {
    if (c.get('actor').role !== 'admin') throw new WarrantError('forbidden', 'metrics are for an admin token')
    return scrape(c, gateway)
  })
}

/**
 * The metrics alone, without a token, for `server.metrics_port`: bind it to loopback (the default) or a
 * network only Prometheus reaches.
 */
export function createMetricsApp(gateway: Gateway): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>()
  app.get('/metrics', (c) => scrape(c, gateway))
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'this port serves GET /metrics only' } }, 404))
  return app
}

async function scrape(c: { body: (data: string, status: 200, headers: Record<string, string>) => Response }, gateway: Gateway): Promise<Response> {
  const { contentType, body } = await gateway.telemetry.scrape()
  return c.body(body, 200, { 'content-type': contentType, 'cache-control': 'no-store' })
}
