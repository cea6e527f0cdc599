import type { Hono } from 'hono'

/** The order methods are named in an Allow header. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * The methods the app's routes take at `path`, in a fixed order (HEAD with GET: hono serves it with the GET route);
 * none when no route has the path. Middleware (registered for every method) is no route.
 *
 * @example methodsAt(app, '/v1/plans/plan_1') // ['GET', 'HEAD']
 */
export function methodsAt(app: Hono<any>, path: string): string[] {
  const methods = new Set<string>()
  for (const route of app.routes) {
    if (route.method === 'ALL' || !patternOf(route.path).test(path)) continue
    methods.add(route.method)
    if (route.method === 'GET') methods.add('HEAD')
  }
  return METHOD_ORDER.filter((method) => methods.has(method))
}

const patterns = new Map<string, RegExp>()

/** A route's path (`/v1/plans/:id`, `/review/*`) as a regular expression over request paths. */
function patternOf(routePath: string): RegExp {
  let pattern = patterns.get(routePath)
  if (!pattern) {
    const source = routePath
      .split('/')
      .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')
    patterns.set(routePath, (pattern = new RegExp(`^${source}$`)))
  }
  return pattern
}
