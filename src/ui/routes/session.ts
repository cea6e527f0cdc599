import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Hono } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { clientAddress, createFailureLimit } from '../../api/failure-limit.js'
import { type Actor, WarrantError } from '../../contract/index.js'
import { paths } from '../components.js'
import { ErrorPage, SignInPage } from '../pages/misc.js'
import { type Ctx, type ReviewRouteDeps, type UiEnv, html } from './context.js'

const SESSION_COOKIE = 'warrant_review'
/** Holds the sign-in form's own CSRF token (double submit), before any session exists. */
const SIGN_IN_COOKIE = 'warrant_review_signin'
const NAMES_TTL_MS = 30_000

/** A form posted from another site is refused before anything else looks at it. */
export function refuseCrossSiteForms(ui: Hono<UiEnv>, deps: ReviewRouteDeps): void {
  ui.use('*', async (c, next) => {
    if (c.req.method === 'POST' && !sameOrigin(c, deps.gateway.config.server.public_url)) return forbiddenForm(c, deps, null)
    if (c.req.method === 'POST') {
      // Read once here (hono keeps the parsed form for the routes): a body that is not a form is the sender's
      // mistake, a 400, never a page failure.
      // any other body reads as a form without fields, which the session gate would call a missing CSRF token
      if (!/^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/i.test(c.req.header('content-type') ?? ''))
        throw new WarrantError('invalid_request', 'the review pages take forms only: send the form as application/x-www-form-urlencoded or multipart/form-data; nothing was changed', { field: 'content-type' })
      let form: Record<string, unknown>
      try {
        form = await c.req.parseBody({ all: true })
      } catch {
        throw new WarrantError('invalid_request', 'the form could not be read: send it as application/x-www-form-urlencoded or a well-formed multipart/form-data')
      }
      refuseRepeatedFields(form)
    }
    await next()
  })
}

/**
 * Sign-in, then the session gate every later route sits behind, then sign-out. Registration order matters:
 * the sign-in routes come before the gate so that they can be reached without a session.
 */
export function registerSessionRoutes(ui: Hono<UiEnv>, deps: ReviewRouteDeps): void {
  const { gateway, recordUi } = deps
  const { sessions } = gateway.review
  // Counted apart from the API's (/v1, /mcp) failures: the sign-in form and bearer-token clients are limited separately.
  const failures = createFailureLimit({ now: () => Date.parse(gateway.store.now()) })
  let names: { map: ReadonlyMap<string, string>; at: number } | null = null

  const principalNames = async (): Promise<ReadonlyMap<string, string>> => {
    if (names && Date.now() - names.at < NAMES_TTL_MS) return names.map
    const map = new Map((await gateway.principals.list()).map((t) => [t.principal_id, t.name]))
    names = { map, at: Date.now() }
    return map
  }

  const secureCookies = (c: Ctx) => new URL(c.req.url).protocol === 'https:' || (gateway.config.server.public_url?.startsWith('https:') ?? false)
  const cookieOptions = (c: Ctx, maxAge: number) => ({ path: '/review', httpOnly: true, sameSite: 'Strict' as const, secure: secureCookies(c), maxAge })

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
    const client = clientAddress(c.env)
    if (failures.blockedFor(client) !== null)
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
      failures.fail(client)
      gateway.log.warn({ client, surface: 'ui', reason: error.message }, 'review sign-in refused')
      await recordUi(null, 'ui:sign_in', { summary: { status: error.status, error: error.code, client } })
      return error.code === 'forbidden'
        ? signInForm(c, next, 403, { title: 'This token cannot sign in to the review pages.', text: error.message })
        : signInForm(c, next, 401, { title: 'That token was not accepted.', text: 'It is unknown, expired or revoked.' })
    }
  })

  // Everything registered after this needs a session.
  ui.use('*', async (c, next) => {
    const session = await sessions.resume(getCookie(c, SESSION_COOKIE))
    if (!session) {
      if (c.req.method === 'GET' || c.req.method === 'HEAD') return c.redirect(`${paths.signIn}?next=${encodeURIComponent(c.req.path + new URL(c.req.url).search)}`, 303)
      return html(c, ErrorPage({ status: 401, code: 'unauthenticated', title: 'Sign in again', message: 'Your session has ended, so nothing was changed. Sign in and try again.', back: paths.signIn }), 401)
    }
    c.set('session', session)
    c.set('viewer', { actor: session.actor, csrf: session.csrf, names: await principalNames(), now: Date.parse(gateway.store.now()) })
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody()
      if (!sessions.csrfMatches(session, form.csrf)) return forbiddenForm(c, deps, session.actor)
    }
    await next()
  })

  ui.post('/sign-out', async (c) => {
    await sessions.signOut(getCookie(c, SESSION_COOKIE))
    deleteCookie(c, SESSION_COOKIE, { path: '/review' })
    await recordUi(c.get('viewer').actor, 'ui:sign_out', { summary: { status: 303 } })
    return c.redirect(paths.signIn, 303)
  })
}

async function forbiddenForm(c: Ctx, deps: ReviewRouteDeps, actor: Actor | null): Promise<Response> {
  await deps.recordUi(actor, 'ui:form_refused', { summary: { status: 403, error: 'forbidden', path: c.req.path, reason: 'missing or wrong CSRF token, or a cross-site form' } })
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

/**
 * Every review form names each field once (its two decision buttons share a name, and a browser sends only the one
 * clicked). Read field by field, a repeated one would be its last value (`decision=reject&decision=approve` recorded
 * an approval), and a `name[]` one a list no route reads: refused as a /v1 body naming a key twice is.
 */
function refuseRepeatedFields(form: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(form)) {
    if (Array.isArray(value))
      throw new WarrantError('invalid_request', `form field "${field}" is given ${value.length === 1 ? 'as a list' : `${value.length} times`}; a review form sends each field once, so nothing was changed`, { field, count: value.length })
  }
}

/** Only a path of these pages: never another site, never a protocol-relative URL. */
function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith('/review') || next.startsWith('//') || next.includes('\\') || /[\r\n]/.test(next)) return paths.queue
  return next
}

/** Hashing both sides first gives equal lengths, which timingSafeEqual needs, without leaking the length. */
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
