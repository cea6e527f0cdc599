import { createRoute, type RouteConfig } from '@hono/zod-openapi'
import { z } from 'zod'
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
  if (route.request?.query !== undefined) return createRoute(route)
  // the handler's types stay the route's own: there is no query for it to read
  return createRoute({ ...route, request: { ...route.request, query: noQuery } }) as R
}

/** The id in a route's path (`/v1/plans/{id}`). */
export const idParam = z.object({ id: z.string().min(1).max(200) })

/** An answer of `schema` as JSON, described. */
export const jsonResponse = <S extends z.ZodType>(description: string, schema: S) => ({ description, content: { 'application/json': { schema } } })

/** A required JSON body of `schema`. */
export const jsonBody = <S extends z.ZodType>(schema: S) => ({ required: true, content: { 'application/json': { schema } } })

/** The error answers a route may give, each the one error body (`{error: {code, message}}`). */
export const errors = (codes: readonly number[]) => Object.fromEntries(codes.map((code) => [code, jsonResponse('error', errorBodySchema)]))
