import assert from 'node:assert/strict'
import type { GatewayFixture } from './gateway-fixture.js'

/** A review page as a signed-in reviewer gets it, as text: sign in through the form, then GET with the session cookie. */
export async function reviewPage(fx: Pick<GatewayFixture, 'base' | 'tokens'>, path: string): Promise<string> {
  return (await reviewPageHtml(fx, path)).replace(/<[^>]+>/g, '').replace(/&quot;/g, '"')
}

/** The same page's HTML, for `pagePart`. */
export async function reviewPageHtml(fx: Pick<GatewayFixture, 'base' | 'tokens'>, path: string): Promise<string> {
  const form = await fetch(`${fx.base}/review/sign-in?next=${encodeURIComponent(path)}`)
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1]
  assert.ok(csrf)
  const cookies = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const signIn = await fetch(`${fx.base}/review/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies(form) },
    body: new URLSearchParams({ csrf, token: fx.tokens.reviewer, next: path }).toString(),
  })
  assert.ok(signIn.status >= 300 && signIn.status < 400, `sign-in answered ${signIn.status}`)
  const page = await fetch(`${fx.base}${path}`, { headers: { cookie: [cookies(form), cookies(signIn)].filter(Boolean).join('; ') } })
  assert.equal(page.status, 200)
  return page.text()
}

/** A page's text as read: tags dropped, entities decoded. */
export const textOf = (html: string) => html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')

/** The HTML of the element carrying `data-testid`, from its opening tag to its closing one. */
export function pagePart(html: string, testid: string): string {
  const at = html.indexOf(`data-testid="${testid}"`)
  assert.ok(at >= 0, `the page has no ${testid}`)
  const tag = html.lastIndexOf('<', at)
  const name = /^<(\w+)/.exec(html.slice(tag))![1]!
  const end = html.indexOf(`</${name}>`, at)
  return html.slice(tag, end)
}
