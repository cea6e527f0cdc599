import { createRoute, type RouteConfig } from '@hono/zod-openapi'
import { z } from 'zod'

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
