import { createRoute, type RouteConfig } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { z } from 'zod'
import { WarrantError } from '../../contract/index.js'
import { errorBodySchema } from '../error-mapping.js'

const noQuery = z.strictObject({})

/**
 * A /v1 route, as `createRoute` makes it, except that one declaring no query parameters refuses any: a parameter
 * nobody reads asks another question than the one written (`POST …/search?filter=…` searched with the body and
 * answered as if the query had not been given).
 *
 * @example
 * const show = v1Route({ method: 'get', path: '/v1/plans/{id}', request: { params: idParam }, responses })
 */
export function v1Route<R extends RouteConfig>(route: R): R {
  const withBody = route.request?.body === undefined ? { ...route, middleware: [refuseBody(route.path), ...[route.middleware ?? []].flat()] } : route
  if (route.request?.query !== undefined) return createRoute(withBody)
  // the handler's types stay the route's own: there is no query for it to read
  return createRoute({ ...withBody, request: { ...route.request, query: noQuery } }) as R
}

/**
 * For a route that reads no body: a body naming anything is refused, as an unread query parameter is. Ignored, it
 * asked another request than the one written (`…/compensation` with {"targets": [...]} compensated every target;
 * `…/recover` with a deadline recovered without it; `GET /v1/audit` with filters in its body answered the whole
 * log). No body, a blank one or `{}` asks nothing and passes.
 */
function refuseBody(path: string): MiddlewareHandler {
  return async (c, next) => {
    // node's request hands a GET's body to no one: its length says whether one came
    const length = Number(c.req.header('content-length') ?? 0)
    if ((c.req.method === 'GET' || c.req.method === 'HEAD') && length > 0)
      throw new WarrantError('invalid_request', `${c.req.method} ${path} takes no request body; this one has ${length} bytes, which nothing here reads, so it is refused rather than ignored. Send none: a GET's parameters go in its query`, {
        field: 'body',
      })
    const text = await c.req.text()
    let parsed: unknown = text.trim() === '' ? {} : undefined
    try {
      parsed ??= JSON.parse(text)
    } catch {
      // not JSON: refused below as a body that is not empty
    }
    const keys = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.keys(parsed) : null
    if (keys?.length === 0) return next()
    const named = (keys ?? []).map((key) => JSON.stringify(key)).join(', ')
    throw new WarrantError('invalid_request', `${c.req.method} ${path} takes no request body; this one ${named ? `names ${named}, which nothing here reads` : 'is not empty'}, so it is refused rather than ignored. Send no body`, {
      field: 'body',
    })
  }
}

/** The id in a route's path (`/v1/plans/{id}`). */
export const idParam = z.object({ id: z.string().min(1).max(200) })

/** An answer of `schema` as JSON, described. */
export const jsonResponse = <S extends z.ZodType>(description: string, schema: S) => ({ description, content: { 'application/json': { schema } } })

/** A required JSON body of `schema`. */
export const jsonBody = <S extends z.ZodType>(schema: S) => ({ required: true, content: { 'application/json': { schema } } })

/** The error answers a route may give, each the one error body (`{error: {code, message}}`). */
export const errors = (codes: readonly number[]) => Object.fromEntries(codes.map((code) => [code, jsonResponse('error', errorBodySchema)]))
