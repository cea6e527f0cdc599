import type { z } from 'zod'
import { isLoopbackHost } from '../contract/index.js'

/**
 * Refuses (as an issue at `path`) plain http to a host off this machine unless
 * `plainHttp` says the network between is the operator's own. Over such a URL the credential and every record
 * cross the network readable, and anything on the path can cut a page or change a record, which a walk would then
 * call complete.
 *
 * @example
 * schema.superRefine((s, ctx) => refusePlainHttp(s.base_url, s.plain_http, ['base_url'], ctx, 'source'))
 */
export function refusePlainHttp(url: string, plainHttp: boolean, path: readonly (string | number)[], ctx: z.RefinementCtx, what: string): void {
  if (!URL.canParse(url)) return // the url schema names that
  const parsed = new URL(url)
  // another scheme is refused where the URL is used (the connector's base URL guard, the webhook's url schema)
  if (parsed.protocol !== 'http:' || plainHttp || isLoopbackHost(parsed.hostname)) return
  ctx.addIssue({
    code: 'custom',
    path: [...path],
    message: `plain http to "${parsed.hostname}", off this machine: what this ${what} sends and reads crosses the network readable, and anything on the path can cut or change it; use https, or set plain_http: true on this ${what} if the network between is your own`,
  })
}
