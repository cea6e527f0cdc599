import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { type Actor, WarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import type { TargetState } from '../operations/index.js'
import type { ActionRequest } from '../plans/index.js'
import type { ReviewSession } from '../review/index.js'
import { SCRIPT, STYLESHEET } from './assets.js'
import { type Viewer, paths } from './components.js'
import { plural, relative } from './format.js'
import { AuditPage } from './pages/audit.js'
import { ErrorPage, SignInPage } from './pages/misc.js'
import { OUTCOME_FILTERS, OperationPage, type OperationPageData } from './pages/operation.js'
import { PlanPage, type PlanPageData } from './pages/plan.js'
import { QueuePage } from './pages/queue.js'
import { ExcludedPageView, SelectionPage } from './pages/selection.js'
import { DEFAULT_PAGE_SIZE, PAGE_SIZES } from './selection-parts.js'

type UiEnv = { Variables: { viewer: Viewer; session: ReviewSession } }
type Ctx = Context<UiEnv>

const SESSION_COOKIE = 'warrant_review'
/** Holds the sign-in form's own CSRF token (double submit), before any session exists. */
const SIGN_IN_COOKIE = 'warrant_review_signin'
const FINISHED = new Set(['succeeded', 'partially_failed', 'failed', 'halted'])
const RETRY_DEADLINES_S = [120, 600, 1800, 3600]
const FAILURE_WINDOW_MS = 60_000
const MAX_FAILURES = 20
const NAMES_TTL_MS = 30_000

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
  const { sessions, queue } = gateway.review
  const failures = new Map<string, { count: number; since: number }>()
  let names: { map: ReadonlyMap<string, string>; at: number } | null = null

  const principalNames = async (): Promise<ReadonlyMap<string, string>> => {
    if (names && Date.now() - names.at < NAMES_TTL_MS) return names.map
    const map = new Map((await gateway.principals.list()).map((t) => [t.principal_id, t.name]))
    names = { map, at: Date.now() }
    return map
  }

  /** Run-level audit of what a reviewer did on these pages; recording never fails the page. */
  const recordUi = (actor: Actor | null, action: string, event: { plan_id?: string | null; selection_id?: string | null; operation_id?: string | null; summary?: Record<string, unknown>; details?: Record<string, unknown> | null }) =>
    gateway.audit.record({ actor, surface: 'ui', action, ...event }).catch((error: unknown) => gateway.log.error({ err: error, action }, 'review pages: could not record an audit event'))

  const secureCookies = (c: Ctx) => new URL(c.req.url).protocol === 'https:' || (gateway.config.server.public_url?.startsWith('https:') ?? false)
  const cookieOptions = (c: Ctx, maxAge: number) => ({ path: '/review', httpOnly: true, sameSite: 'Strict' as const, secure: secureCookies(c), maxAge })

  // ---------- every response ----------

  ui.use('*', async (c, next) => {
    await next()
    const h = c.res.headers
    h.set('content-security-policy', CSP)
    h.set('x-content-type-options', 'nosniff')
    h.set('x-frame-options', 'DENY')
    h.set('referrer-policy', 'same-origin')
    if (!h.has('cache-control')) h.set('cache-control', 'no-store')
  })

  // A form posted from another site is refused before anything else looks at it.
  ui.use('*', async (c, next) => {
    if (c.req.method === 'POST' && !sameOrigin(c, gateway.config.server.public_url)) return forbiddenForm(c, null)
    await next()
  })

  ui.get('/assets/review.css', (c) => c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=300' }))
  ui.get('/assets/review.js', (c) => c.body(SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' }))

  // ---------- sign in ----------

  const signInForm = (c: Ctx, next: string, status: ContentfulStatusCode, problem: { title: string; text: string } | null) => {
    const csrf = randomBytes(24).toString('base64url')
    setCookie(c, SIGN_IN_COOKIE, csrf, cookieOptions(c, 900))
    return html(c, SignInPage({ csrf, next, problem }), status)
  }

  ui.get('/sign-in', async (c) => {
    const next = safeNext(c.req.query('next'))
    if (await sessions.resume(getCookie(c, SESSION_COOKIE))) return c.redirect(next, 303)
    return signInForm(c, next, 200, null)
  })

  ui.post('/sign-in', async (c) => {
    const form = await c.req.parseBody()
    const next = safeNext(typeof form.next === 'string' ? form.next : undefined)
    if (!sameSecret(getCookie(c, SIGN_IN_COOKIE), form.csrf))
      return signInForm(c, next, 403, { title: 'The sign-in form was not accepted.', text: 'It expired, or was not sent by this page. Sign in again with this form.' })
    const client = clientAddress(c)
    const now = Date.now()
    const seen = failures.get(client)
    if (seen && now - seen.since < FAILURE_WINDOW_MS && seen.count >= MAX_FAILURES)
      return signInForm(c, next, 429, { title: 'Too many failed sign-ins from this address.', text: 'Wait a minute, then try again.' })
    const token = typeof form.token === 'string' ? form.token : ''
    try {
      const opened = await sessions.signIn(token)
      setCookie(c, SESSION_COOKIE, opened.sessionId, cookieOptions(c, Math.max(60, Math.floor((Date.parse(opened.expires_at) - Date.parse(gateway.store.now())) / 1000))))
      deleteCookie(c, SIGN_IN_COOKIE, { path: '/review' })
      await recordUi(opened.actor, 'ui:sign_in', { summary: { status: 303, session_expires_at: opened.expires_at } })
      await sessions.sweep().catch((error: unknown) => gateway.log.warn({ err: error }, 'review sessions: could not delete ended sessions'))
      return c.redirect(next, 303)
    } catch (error) {
      if (!(error instanceof WarrantError) || (error.code !== 'unauthenticated' && error.code !== 'forbidden')) throw error
      const fresh = !seen || now - seen.since >= FAILURE_WINDOW_MS
      failures.set(client, fresh ? { count: 1, since: now } : { count: seen.count + 1, since: seen.since })
      if (failures.size > 10_000) failures.clear()
      gateway.log.warn({ client, surface: 'ui', reason: error.message }, 'review sign-in refused')
      await recordUi(null, 'ui:sign_in', { summary: { status: error.status, error: error.code, client } })
      return error.code === 'forbidden'
        ? signInForm(c, next, 403, { title: 'This token cannot sign in to the review pages.', text: error.message })
        : signInForm(c, next, 401, { title: 'That token was not accepted.', text: 'It is unknown, expired or revoked.' })
    }
  })

  // ---------- everything else needs a session ----------

  ui.use('*', async (c, next) => {
    const session = await sessions.resume(getCookie(c, SESSION_COOKIE))
    if (!session) {
      if (c.req.method === 'GET' || c.req.method === 'HEAD') return c.redirect(`${paths.signIn}?next=${encodeURIComponent(c.req.path + queryOf(c))}`, 303)
      return html(c, ErrorPage({ status: 401, code: 'unauthenticated', title: 'Sign in again', message: 'Your session has ended, so nothing was changed. Sign in and try again.', back: paths.signIn }), 401)
    }
    c.set('session', session)
    c.set('viewer', { actor: session.actor, csrf: session.csrf, names: await principalNames() })
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody()
      if (!sessions.csrfMatches(session, form.csrf)) return forbiddenForm(c, session.actor)
    }
    await next()
  })

  async function forbiddenForm(c: Ctx, actor: Actor | null): Promise<Response> {
    await recordUi(actor, 'ui:form_refused', { summary: { status: 403, error: 'forbidden', path: c.req.path, reason: 'missing or wrong CSRF token, or a cross-site form' } })
    return html(
      c,
      ErrorPage({
        viewer: c.get('viewer') ?? null,
        status: 403,
        code: 'forbidden',
        title: 'Form refused',
        message: 'This form was not sent by a review page of your session (its CSRF token is missing or wrong, or it came from another site). Nothing was changed.',
      }),
      403,
    )
  }

  ui.post('/sign-out', async (c) => {
    await sessions.signOut(getCookie(c, SESSION_COOKIE))
    deleteCookie(c, SESSION_COOKIE, { path: '/review' })
    await recordUi(c.get('viewer').actor, 'ui:sign_out', { summary: { status: 303 } })
    return c.redirect(paths.signIn, 303)
  })

  // ---------- queue ----------

  ui.get('/', async (c) => {
    const actor = c.get('viewer').actor
    const { plans, more } = await queue.awaitingDecision(actor)
    const recent = await queue.recentlyDecided(actor, { limit: 15 })
    return html(c, QueuePage({ viewer: c.get('viewer'), waiting: plans, more, recent }))
  })

  // ---------- plans ----------

  async function renderPlan(c: Ctx, planId: string, notice: PlanPageData['notice'], status: ContentfulStatusCode = 200): Promise<Response> {
    const viewer = c.get('viewer')
    const actor = viewer.actor
    const plan = await gateway.plans.view(actor, planId)
    const selection = await gateway.selections.view(actor, plan.selection_id)
    const limit = pageSize(c.req.query('limit'))
    const memberCursor = c.req.query('m') || undefined
    const changesCursor = c.req.query('c') || undefined
    const page = await gateway.selections.page(actor, plan.selection_id, { cursor: memberCursor, limit })
    const changes = await gateway.plans.changes(actor, planId, { cursor: changesCursor, limit })
    const base = paths.plan(planId) + (limit === DEFAULT_PAGE_SIZE ? '' : `?limit=${limit}`)
    const next = page.next_cursor
      ? `${paths.plan(planId)}?${new URLSearchParams({ limit: String(limit), m: page.next_cursor, ...(changes.next_cursor ? { c: changes.next_cursor } : {}) })}#records-manifest`
      : null
    let shown = notice ?? null
    const decided = c.req.query('decided')
    if (!shown && (decided === 'approve' || decided === 'reject')) {
      const mine = plan.approvals.filter((a) => a.principal === actor.principal && a.decision === decided).at(-1)
      if (mine)
        shown =
          decided === 'reject'
            ? { kind: 'ok', title: 'Your rejection is recorded.', text: 'The plan takes no more decisions and cannot be committed.' }
            : {
                kind: 'ok',
                title: 'Your approval is recorded.',
                text: `It is bound to plan digest ${mine.plan_digest} and valid until ${mine.expires_at ?? '—'} (${relative(mine.expires_at)}). ${
                  plan.approval_state.still_needed > 0 ? `${plural(plan.approval_state.still_needed, 'more distinct reviewer')} must approve.` : 'The plan is approved: the agent may commit it.'
                }`,
              }
    }
    if (!shown && c.req.query('proposed') === '1' && plan.proposed_by === actor.principal)
      shown = { kind: 'info', title: 'You proposed this plan.', text: 'It waits in the queue; another reviewer must approve it.' }
    return html(
      c,
      PlanPage({
        viewer,
        plan,
        selection,
        page,
        changes,
        nav: { base, limit, paged: memberCursor !== undefined, next },
        operations: await queue.operationsOf(actor, planId),
        deliveries: await gateway.notifications.deliveries({ plan_id: planId }),
        notificationsEnabled: gateway.notifications.enabled,
        notice: shown,
      }),
      status,
    )
  }

  ui.get('/plans/:id', (c) => renderPlan(c, c.req.param('id'), null))

  ui.post('/plans/:id/decision', async (c) => {
    const planId = c.req.param('id')
    const actor = c.get('viewer').actor
    const form = await c.req.parseBody()
    const decision = form.decision === 'approve' || form.decision === 'reject' ? form.decision : null
    if (!decision) throw new WarrantError('invalid_request', 'the form must say approve or reject', { field: 'decision' })
    const digest = typeof form.plan_digest === 'string' ? form.plan_digest : ''
    const comment = typeof form.comment === 'string' && form.comment.trim() !== '' ? form.comment.trim().slice(0, 4000) : undefined
    try {
      // The same service call as POST /v1/plans/{id}/approvals: the same refusals (incomplete, expired, changed).
      const result = await gateway.plans.decide(actor, planId, { decision, expected_plan_digest: digest, ...(comment === undefined ? {} : { comment }) })
      await recordUi(actor, `ui:${decision}`, {
        plan_id: planId,
        selection_id: result.selection_id,
        summary: { status: 201, plan_state: result.plan_state, still_needed: result.still_needed, target_count: result.target_count, environment: result.environment },
        details: { decision, decided_by: actor.principal, comment: comment ?? null, plan_digest: result.plan_digest, approval_id: result.approval_id, expires_at: result.expires_at },
      })
      return c.redirect(`${paths.plan(planId)}?decided=${decision}#decision`, 303)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
      await recordUi(actor, `ui:${decision}`, {
        plan_id: planId,
        summary: { status: error.status, error: error.code },
        details: { attempted_decision: decision, expected_plan_digest: digest },
      })
      if (error.code === 'not_found' || error.code === 'forbidden') throw error
      return renderPlan(
        c,
        planId,
        { kind: 'error', title: `Your ${decision === 'approve' ? 'approval' : 'rejection'} was refused; nothing was recorded.`, text: error.message, code: error.code },
        error.status as ContentfulStatusCode,
      )
    }
  })

  ui.get('/plans/:id/audit', async (c) => {
    const viewer = c.get('viewer')
    const planId = c.req.param('id')
    const plan = await gateway.plans.view(viewer.actor, planId)
    const operations = await queue.operationsOf(viewer.actor, planId)
    const LIMIT = 500
    const pages = [
      await gateway.audit.query({ selection_id: plan.selection_id, level: 'run', limit: LIMIT }),
      await gateway.audit.query({ plan_id: planId, level: 'run', limit: LIMIT }),
      ...(await Promise.all(operations.map((o) => gateway.audit.query({ operation_id: o.operation_id, level: 'run', limit: LIMIT })))),
    ]
    const bySeq = new Map(pages.flatMap((p) => p.events).map((e) => [e.seq, e]))
    const runEvents = [...bySeq.values()].sort((a, b) => a.seq - b.seq)
    const chosen = operations.find((o) => o.operation_id === c.req.query('operation')) ?? operations[0]
    let calls: Parameters<typeof AuditPage>[0]['calls'] = null
    if (chosen) {
      const after = /^\d{1,15}$/.test(c.req.query('after') ?? '') ? Number(c.req.query('after')) : undefined
      const page = await gateway.audit.query({ operation_id: chosen.operation_id, level: 'call', limit: 200, ...(after === undefined ? {} : { after_seq: after }) })
      const here = `${paths.planAudit(planId)}?operation=${encodeURIComponent(chosen.operation_id)}`
      calls = { operationId: chosen.operation_id, events: page.events, next: page.next_cursor === null ? null : `${here}&after=${page.next_cursor}#calls`, first: after === undefined ? null : `${here}#calls` }
    }
    return html(c, AuditPage({ viewer, plan, operations, runEvents, runTruncated: pages.some((p) => p.next_cursor !== null), calls }))
  })

  // ---------- selections ----------

  ui.get('/selections/:id', async (c) => {
    const viewer = c.get('viewer')
    const id = c.req.param('id')
    const selection = await gateway.selections.view(viewer.actor, id)
    const limit = pageSize(c.req.query('limit'))
    const cursor = c.req.query('m') || undefined
    const page = await gateway.selections.page(viewer.actor, id, { cursor, limit })
    const base = paths.selection(id) + (limit === DEFAULT_PAGE_SIZE ? '' : `?limit=${limit}`)
    const next = page.next_cursor ? `${paths.selection(id)}?${new URLSearchParams({ limit: String(limit), m: page.next_cursor })}#records-manifest` : null
    const notice = c.req.query('created') === '1' ? { kind: 'ok' as const, title: 'A new selection was created.', text: `Its digest is ${selection.digest}.` } : null
    return html(c, SelectionPage({ viewer, selection, page, nav: { base, limit, paged: cursor !== undefined, next }, notice }))
  })

  ui.get('/selections/:id/excluded', async (c) => {
    const viewer = c.get('viewer')
    const id = c.req.param('id')
    const rule = c.req.query('rule') ?? ''
    const cursor = c.req.query('cursor') || undefined
    const selection = await gateway.selections.view(viewer.actor, id)
    const page = await gateway.selections.excluded(viewer.actor, id, { rule, cursor, limit: 100 })
    const base = paths.excluded(id, rule)
    return html(c, ExcludedPageView({ viewer, selection, page, base, paged: cursor !== undefined, next: page.next_cursor ? `${base}&cursor=${encodeURIComponent(page.next_cursor)}` : null }))
  })

  ui.get('/selections/:id/export', async (c) => {
    const actor = c.get('viewer').actor
    const id = c.req.param('id')
    const format = c.req.query('format') === 'ndjson' ? 'ndjson' : c.req.query('format') === 'csv' || c.req.query('format') === undefined ? 'csv' : null
    if (!format) throw new WarrantError('invalid_request', 'format must be csv or ndjson', { field: 'format' })
    const { stream, contentType, filename, selection } = await gateway.selections.exportStream(actor, id, format)
    await recordUi(actor, 'ui:export_manifest', { selection_id: id, summary: { status: 200, format, count: selection.count, digest: selection.digest } })
    return new Response(stream, {
      status: 200,
      headers: {
        'content-type': contentType,
        'content-disposition': `attachment; filename="${filename}"`,
        'cache-control': 'no-store',
        'x-warrant-selection-id': selection.selection_id,
        'x-warrant-selection-count': String(selection.count),
        'x-warrant-selection-digest': selection.digest,
        'x-warrant-selection-complete': String(selection.complete),
      },
    })
  })

  /**
   * A recovery choice on an incomplete selection: `recover` (restrict to the returned ids) or `retry` (the same
   * selector, a longer deadline). From a plan page, the plan's action is proposed on the new selection.
   */
  async function recovery(c: Ctx, kind: 'recover' | 'retry'): Promise<Response> {
    const actor = c.get('viewer').actor
    const selectionId = c.req.param('id') ?? ''
    const form = await c.req.parseBody()
    const planId = typeof form.plan_id === 'string' && form.plan_id !== '' ? form.plan_id : null
    const back = planId ? paths.plan(planId) : paths.selection(selectionId)
    try {
      let action: ActionRequest | null = null
      if (planId) {
        const plan = await gateway.plans.load(actor, planId)
        if (plan.selection_id !== selectionId) throw new WarrantError('invalid_request', `plan ${planId} is not on selection ${selectionId}`, { field: 'plan_id' })
        action = { type: plan.action.type, params: plan.action.params as Record<string, string | number | boolean> }
      }
      let created
      if (kind === 'recover') created = await gateway.selections.recover(actor, selectionId)
      else {
        const seconds = Number(form.deadline_seconds)
        if (!RETRY_DEADLINES_S.includes(seconds)) throw new WarrantError('invalid_request', `the deadline must be one of ${RETRY_DEADLINES_S.join(', ')} seconds`, { field: 'deadline_seconds' })
        const old = await gateway.selections.load(actor, selectionId)
        created = await gateway.selections.create(actor, old.resource, {
          filter: old.selector.filter,
          exclude: old.selector.exclude,
          fields: old.fields,
          budget: { deadline_ms: seconds * 1000 },
        })
      }
      await recordUi(actor, `ui:${kind}_selection`, {
        selection_id: created.selection_id,
        plan_id: planId,
        summary: { status: 201, from_selection: selectionId, complete: created.complete, count: created.count },
      })
      if (!action) return c.redirect(`${paths.selection(created.selection_id)}?created=1`, 303)
      const proposal = await gateway.plans.propose(actor, created.selection_id, { action })
      await recordUi(actor, 'ui:propose_plan', { selection_id: created.selection_id, plan_id: proposal.plan_id, summary: { status: proposal.created ? 201 : 200, replaces_plan: planId } })
      return c.redirect(`${paths.plan(proposal.plan_id)}?proposed=1`, 303)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
      await recordUi(actor, `ui:${kind}_selection`, { selection_id: selectionId, plan_id: planId, summary: { status: error.status, error: error.code } })
      return html(
        c,
        ErrorPage({
          viewer: c.get('viewer'),
          status: error.status,
          code: error.code,
          title: kind === 'recover' ? 'The recovery was refused' : 'The retry was refused',
          message: `${error.message}. The incomplete selection is unchanged.`,
          back,
        }),
        error.status as ContentfulStatusCode,
      )
    }
  }

  ui.post('/selections/:id/recover', (c) => recovery(c, 'recover'))
  ui.post('/selections/:id/retry', (c) => recovery(c, 'retry'))

  // ---------- operations ----------

  async function renderOperation(c: Ctx, operationId: string, notice: OperationPageData['notice'], status: ContentfulStatusCode = 200): Promise<Response> {
    const viewer = c.get('viewer')
    const operation = await gateway.operations.get(viewer.actor, operationId)
    const requested = c.req.query('outcome')
    const outcome = requested && (OUTCOME_FILTERS as readonly string[]).includes(requested) ? (requested as TargetState) : null
    const cursor = c.req.query('cursor') || undefined
    const results = await gateway.operations.results(viewer.actor, operationId, { ...(outcome ? { outcome } : {}), ...(cursor ? { cursor } : {}), limit: 100 })
    let plan = null
    try {
      plan = await gateway.plans.view(viewer.actor, operation.plan_id)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
    }
    const base = paths.operation(operationId)
    const next = results.next_cursor ? `${base}?${new URLSearchParams({ ...(outcome ? { outcome } : {}), cursor: results.next_cursor })}#targets` : null
    return html(c, OperationPage({ viewer, operation, plan, results, outcome, base, paged: cursor !== undefined, next, notice }), status)
  }

  ui.get('/operations/:id', (c) => renderOperation(c, c.req.param('id'), null))

  ui.get('/operations/:id/status', async (c) => {
    const view = await gateway.operations.get(c.get('viewer').actor, c.req.param('id'))
    return c.json({ ...view, finished: FINISHED.has(view.state) })
  })

  ui.post('/operations/:id/compensation', async (c) => {
    const actor = c.get('viewer').actor
    const operationId = c.req.param('id')
    try {
      const proposal = (await gateway.operations.proposeCompensation(actor, operationId)) as { plan_id: string; created?: boolean; target_count?: number }
      await recordUi(actor, 'ui:propose_compensation', { operation_id: operationId, plan_id: proposal.plan_id, summary: { status: proposal.created === false ? 200 : 201, target_count: proposal.target_count ?? null } })
      return c.redirect(`${paths.plan(proposal.plan_id)}?proposed=1`, 303)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
      await recordUi(actor, 'ui:propose_compensation', { operation_id: operationId, summary: { status: error.status, error: error.code } })
      if (error.code === 'not_found' || error.code === 'forbidden') throw error
      return renderOperation(c, operationId, { kind: 'error', title: 'The compensation was not proposed.', text: error.message, code: error.code }, error.status as ContentfulStatusCode)
    }
  })

  // ---------- the rest ----------

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

/** Renders a page component to a full HTML document. */
async function html(c: Ctx, node: unknown, status: ContentfulStatusCode = 200): Promise<Response> {
  const body = `<!doctype html>${await (node as { toString(): string | Promise<string> }).toString()}`
  return c.body(body, status, { 'content-type': 'text/html; charset=utf-8' })
}

function pageSize(value: string | undefined): number {
  const n = Number(value)
  return (PAGE_SIZES as readonly number[]).includes(n) ? n : DEFAULT_PAGE_SIZE
}

function queryOf(c: Ctx): string {
  const url = new URL(c.req.url)
  return url.search
}

/** Only a path of these pages: never another site, never a protocol-relative URL. */
function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith('/review') || next.startsWith('//') || next.includes('\\') || /[\r\n]/.test(next)) return paths.queue
  return next
}

function sameSecret(expected: string | undefined, given: unknown): boolean {
  if (!expected || typeof given !== 'string' || given === '') return false
  const a = createHash('sha256').update(expected).digest()
  const b = createHash('sha256').update(given).digest()
  return timingSafeEqual(a, b)
}

/** A POST whose Origin (when the browser sends one) is neither this host nor the configured public URL is cross-site. */
function sameOrigin(c: Ctx, publicUrl: string | undefined): boolean {
  const origin = c.req.header('origin')
  if (!origin) return true
  if (origin === 'null') return false
  try {
    const host = new URL(origin).host
    if (host === c.req.header('host')) return true
    return publicUrl !== undefined && new URL(publicUrl).host === host
  } catch {
    return false
  }
}

function clientAddress(c: Ctx): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming
  return incoming?.socket?.remoteAddress ?? 'unknown'
}
