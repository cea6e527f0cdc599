import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'
import { WarrantError } from '../contract/index.js'

/**
 * Refuses a request path holding a dot segment (`.` or `..`, plain or percent-encoded, `%2E%2E`) as node:http
 * received it. URL parsers resolve such a segment away before any route sees it, so `GET …/records/%2E%2E` reached
 * `…/subscriptions/` and answered 404 `not_found`: a record whose id is `..` read as absent. The refusal names the
 * segment and the query form (`…/records?id=..`), which reads any id. Off node:http (no raw line) nothing is checked.
 */
export function refuseDotSegments(c: Context): void {
  const raw = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.url
  if (raw === undefined) return
  const path = raw.split('?', 1)[0]!
  for (const segment of path.split('/').slice(1)) {
    if (!/^(?:\.|%2e){1,2}$/i.test(segment)) continue
    throw new WarrantError(
      'invalid_request',
      `the request path holds the dot segment "${segment}", which URL parsers resolve away: the request would reach another path than the one sent. A record whose id is "." or ".." is read with GET /v1/resources/{resource}/records?id=<id, percent-encoded>`,
      { field: 'path', segment },
    )
  }
}
