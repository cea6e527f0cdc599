import type { ResourceConfig } from '../../config/schema.js'
import { WarrantError } from '../../contract/index.js'
import type { SourceRecord, WriteOutcome, WriteRequest } from '../connector.js'
import type { CallSpec, HttpContext } from './context.js'
import { toRecord } from './record.js'
import { failureMessage, isRedirect, parseJsonBody, rateLimit, statusMessage } from './upstream-answer.js'
import { assertRelativePath, resolveUnderBase } from './url-guard.js'
import type { UpstreamExchange } from './upstream-request.js'

const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * One conditional write of `request.http` (method, path rendered by the caller, JSON body), with
 * `If-Match: <expectedVersion>` when asked. The sources are tried in order; a 404 moves on to the next,
 * 404 everywhere is a `missing` conflict. Anything without a durable answer (5xx, timeout, network error,
 * redirect, a 2xx body that cannot be read) is `unknown`: the write may have happened.
 */
export async function writeRecord(ctx: HttpContext, request: WriteRequest): Promise<WriteOutcome> {
  const http = request.http
  if (!http) throw new WarrantError('invalid_request', 'an http write needs request.http (method, path, body)')
  const method = http.method.toUpperCase()
  if (!WRITE_METHODS.has(method)) throw new WarrantError('invalid_request', `write method ${http.method} is not one of POST, PUT, PATCH, DELETE`)
  assertRelativePath(http.path)
  if (http.ifMatch && request.expectedVersion === '')
    throw new WarrantError('invalid_request', `record "${request.id}" has no version to send as If-Match; a conditional write is impossible`)

  const headers: Record<string, string> = {}
  if (http.body !== undefined) headers['content-type'] = 'application/json'
  if (http.ifMatch) headers['if-match'] = request.expectedVersion
  const body = http.body === undefined ? undefined : JSON.stringify(http.body)
  const endpoint = writeEndpoint(ctx.resource, method, http.path, request.id)

  for (const source of ctx.sourceNames) {
    const spec: CallSpec = {
      source,
      method,
      endpoint,
      targetId: request.id,
      url: resolveUnderBase(ctx.baseOf(source), http.path),
      headers,
      ...(body === undefined ? {} : { body }),
      ...(request.signal ? { signal: request.signal } : {}),
    }
    const result = await ctx.send(spec)
    if (result.kind === 'response' && result.status === 404) {
      ctx.report(spec, result, 'not_found')
      continue
    }
    const outcome = interpret(ctx, source, request.id, result)
    ctx.report(spec, result, outcome.kind)
    return outcome
  }
  return { kind: 'conflict', reason: 'missing', status: 404, message: `record "${request.id}" was not found on any source (${ctx.sourceNames.join(', ')})` }
}

function interpret(ctx: HttpContext, source: string, id: string, result: UpstreamExchange): WriteOutcome {
  const failure = failureMessage(ctx, source, result)
  if (failure !== null || result.kind !== 'response') {
    const status = result.kind === 'too_large' ? { status: result.status } : {}
    return { kind: 'unknown', ...status, message: `${failure ?? `source "${source}" gave no answer`}; the write may or may not have happened` }
  }
  const { status, headers, body } = result
  const parsed = parseJsonBody(body)
  const message = (what: string) => statusMessage(ctx, source, status, body, what)

  if (status >= 200 && status < 300) {
    if (body !== null && body.trim() === '') return { kind: 'written', status, record: null }
    if (!parsed.ok) return { kind: 'unknown', status, message: `source "${source}" answered ${status} with a body that is not JSON; the write may or may not have happened` }
    const value = ctx.redact.deep(parsed.value)
    return { kind: 'written', status, record: recordOf(ctx, id, value, headers.get('etag')), body: value }
  }
  if (status === 412) return { kind: 'conflict', reason: 'version_changed', status, message: message('refused the version (If-Match) with') }
  if (status === 409) return { kind: 'conflict', reason: 'precondition_failed', status, message: message('reported a conflict:') }
  if (status === 401 || status === 403) return { kind: 'unauthorized', status, message: message('refused the credential with') }
  if (status === 429) return { kind: 'rate_limited', status, ...rateLimit(source, headers) }
  if (isRedirect(status))
    return { kind: 'unknown', status, message: `source "${source}" answered the write with a redirect (${status}), which is never followed` }
  if (status >= 400 && status < 500)
    return { kind: 'rejected', status, message: message('rejected the write with'), ...(parsed.ok ? { body: ctx.redact.deep(parsed.value) } : {}) }
  return { kind: 'unknown', status, message: `${message('answered')}; the write may or may not have happened` }
}

/** The record in a write's response body, when the body is an object with the id field. */
function recordOf(ctx: HttpContext, id: string, value: unknown, etag: string | null): SourceRecord | null {
  const made = toRecord(ctx, value, etag, ctx.config.get.record_path)
  return 'record' in made && made.record.id === id ? made.record : null
}

/**
 * The template a rendered write path came from, for the call log: the declared action path it matches,
 * else the path with the id segment replaced by `{id}`.
 */
export function writeEndpoint(resource: ResourceConfig, method: string, path: string, id: string): string {
  const pathname = path.split('?')[0]!
  for (const action of Object.values(resource.actions)) {
    const write = action.write
    if (write && write.method === method && templatePattern(write.path).test(pathname)) return write.path
  }
  const encoded = encodeURIComponent(id)
  return pathname
    .split('/')
    .map((segment) => (segment !== '' && (segment === encoded || segment === id) ? '{id}' : segment))
    .join('/')
}

function templatePattern(template: string): RegExp {
  const literals = template.split(/\{[^{}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${literals.join('[^/]+')}$`)
}
