import assert from 'node:assert/strict'

/**
 * A review-page session opened over plain HTTP, as a browser would: the sign-in form's CSRF cookie, then the
 * session cookie. For tests that read or post review pages without driving Chromium.
 */
export interface ReviewHttpSession {
  /** GET a review page (or POST a form of it, the session's CSRF token added unless `csrf` is given). */
  get(path: string): Promise<{ status: number; html: string; location: string | null }>
  post(path: string, form: Record<string, string>): Promise<{ status: number; html: string; location: string | null }>
  /** The CSRF token the last page read carried. */
  readonly csrf: string
  /** The session's cookie header, for a request the test makes itself (a download read as a stream). */
  readonly cookie: string
}

export async function openReviewSession(base: string, token: string): Promise<ReviewHttpSession> {
  const jar: Record<string, string> = {}
  let csrf = ''
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      jar[pair!.slice(0, at)] = pair!.slice(at + 1)
    }
  }
  const cookie = () => Object.entries(jar).map(([k, v]) => `${k}=${v}`).join('; ')
  const read = async (response: Response) => {
    keep(response)
    const html = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? csrf
    return { status: response.status, html, location: response.headers.get('location') }
  }
  const form = await read(await fetch(`${base}/review/sign-in`))
  assert.equal(form.status, 200)
  const signedIn = await read(
    await fetch(`${base}/review/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
      body: new URLSearchParams({ csrf, token }).toString(),
    }),
  )
  assert.equal(signedIn.status, 303, `sign-in: ${signedIn.html.slice(0, 300)}`)
  return {
    get csrf() {
      return csrf
    },
    get cookie() {
      return cookie()
    },
    get: async (path) => read(await fetch(`${base}${path}`, { redirect: 'manual', headers: { cookie: cookie() } })),
    post: async (path, fields) =>
      read(
        await fetch(`${base}${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
          body: new URLSearchParams({ csrf, ...fields }).toString(),
        }),
      ),
  }
}
