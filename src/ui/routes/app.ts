import { randomUUID } from 'node:crypto'
import { type Context, Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { WarrantError } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import { SCRIPT, STYLESHEET } from '../assets.js'
import type { Viewer } from '../components.js'
import { ErrorPage } from '../pages/misc.js'
import { type Ctx, type ReviewRouteDeps, type UiEnv, html, uiAuditRecorder } from './context.js'
import { registerOperationRoutes } from './operations.js'
import { registerPlanRoutes } from './plans.js'
import { registerSelectionRoutes } from './selections.js'
import { refuseCrossSiteForms, registerSessionRoutes } from './session.js'

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

const TITLES: Partial<Record<string, string>> = {
  not_found: 'Not found',
  forbidden: 'Not allowed',
  unauthenticated: 'Sign in again',
  expired: 'Expired',
  invalid_request: 'Not a valid request',
  invalid_cursor: 'That page link is not valid',
  conflict: 'Not possible now',
  selection_incomplete: 'The selection is incomplete',
  digest_mismatch: 'The plan changed',
  internal: 'Something went wrong',
  payload_too_large: 'Too large',
  unsupported_media_type: 'Not UTF-8',
}

/** The headers every review page carries: its content policy, no sniffing, no framing, no caching unless said. */
function withPageHeaders(h: Headers): void {
  h.set('content-security-policy', CSP)
  h.set('x-content-type-options', 'nosniff')
  h.set('x-frame-options', 'DENY')
  h.set('referrer-policy', 'same-origin')
  if (!h.has('cache-control')) h.set('cache-control', 'no-store')
}

/**
 * A refusal made before any review route runs (the input guard: a path or query that is not UTF-8, a body too large
 * or compressed), as the small HTML page a browser shows, with the same status, naming the problem and its code.
 */
export async function reviewRefusalPage(c: Context, refusal: WarrantError): Promise<Response> {
  const response = await html(c as Ctx, ErrorPage({ viewer: null, status: refusal.status, code: refusal.code, title: TITLES[refusal.code] ?? 'Refused', message: refusal.message }), refusal.status as ContentfulStatusCode)
  withPageHeaders(response.headers)
  return response
}

/**
 * Mounts the review pages at `/review` on the gateway's app: sign-in, queue, plan, selection, operation and
 * audit pages. Every page calls the same services as the HTTP API with the signed-in reviewer as the actor,
 * so a rule can never differ between the two.
 *
 * @example registerReviewPages(app, gateway)
 */
export function registerReviewPages(app: { route(path: string, sub: Hono<UiEnv>): unknown }, gateway: Gateway): void {
  app.route('/review', createReviewApp(gateway))
}

export function createReviewApp(gateway: Gateway): Hono<UiEnv> {
  const ui = new Hono<UiEnv>()
  const deps: ReviewRouteDeps = { gateway, recordUi: uiAuditRecorder(gateway) }

  ui.use('*', async (c, next) => {
    await next()
    withPageHeaders(c.res.headers)
  })

  // `/review/`, `/review/plans/x/`: the page without its trailing slashes, as a reader who typed or pasted it expects
  // (was 404, and the sign-in form sent one there). GET and HEAD only: a redirected form would lose its body. The
  // Location is a path on this host, the query kept.
  ui.use('*', async (c, next) => {
    const url = new URL(c.req.url)
    if ((c.req.method === 'GET' || c.req.method === 'HEAD') && url.pathname.length > '/review'.length && url.pathname.endsWith('/'))
      return c.redirect(`${url.pathname.replace(/\/+$/, '')}${url.search}`, 301)
    await next()
  })

  refuseCrossSiteForms(ui, deps)

  ui.get('/assets/review.css', (c) => c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=300' }))
  ui.get('/assets/review.js', (c) => c.body(SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' }))

  // Hono runs handlers in registration order: the session gate sits between sign-in and every page below.
  registerSessionRoutes(ui, deps)
  registerPlanRoutes(ui, deps)
  registerSelectionRoutes(ui, deps)
  registerOperationRoutes(ui, deps)

  ui.all('*', (c) =>
    html(c, ErrorPage({ viewer: c.get('viewer') ?? null, status: 404, code: 'not_found', title: 'Not found', message: `There is no review page at ${c.req.path}.` }), 404),
  )

  ui.onError((error, c) => {
    const viewer = (c.get('viewer') as Viewer | undefined) ?? null
    if (error instanceof WarrantError)
      return html(c, ErrorPage({ viewer, status: error.status, code: error.code, title: TITLES[error.code] ?? 'Refused', message: error.message }), error.status as ContentfulStatusCode)
    const id = randomUUID()
    gateway.log.error({ err: error, error_id: id, path: c.req.path }, 'review page failed')
    return html(c, ErrorPage({ viewer, status: 500, code: 'internal', title: 'Something went wrong', message: `The page failed (error id ${id}); it is logged.` }), 500)
  })

  return ui
}
