import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/**
 * How many times the request carried header `name` (lower case), as node:http received it; undefined off node:http.
 * A header sent twice reaches the app as one value joined by ", ", which names neither value sent.
 */
export function timesSent(c: Context, name: string): number | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.headersDistinct?.[name]?.length
}
