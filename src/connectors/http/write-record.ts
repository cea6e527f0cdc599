import { holdsRounded } from '../../contract/index.js'
import type { ResourceConfig } from '../../config/schema.js'
import { unstorableKey, WarrantError } from '../../contract/index.js'
import type { HttpWrite, SourceRecord, WriteOutcome, WriteRequest } from '../connector.js'
import { withRepresentation } from '../representation.js'
import type { CallSpec, HttpContext } from './context.js'
import { readPath, writePath } from './json-path.js'
import { fieldPath, scalarText, toRecord } from './record.js'
import { deniedScrubber, deniedValuesOf } from './denied-values.js'
import { REDACTED } from './redaction.js'
import { pageNotFound } from './page-not-found.js'
import { undeclaredSource } from './frozen-source.js'
import { errorInBody } from './error-body.js'
import { answeredStatus, failureMessage, isRedirect, notJsonMessage, parseJsonBody, statusMessage, writeRateLimit } from './upstream-answer.js'
import { assertRelativePath, resolveUnderBase } from './url-guard.js'
import type { UpstreamExchange } from './upstream-request.js'

const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const WEAK_ETAG = /^W\//
const WEAK_412 =
  '; the version sent is a weak ETag (W/…), which a server comparing If-Match strongly, as RFC 9110 asks, refuses whatever the record holds: if every target is refused so, have the upstream send strong ETags, or version the resource by a field'

/**
 * One conditional write of `request.http`, in its style: `patch` sends the rendered body; `replace` sends the
 * representation re-read just before the write (`request.current`, undeclared and denied fields included)
 * with the set fields applied at their paths; `action` calls an endpoint with the rendered body, if any. The
 * version goes where the config says (a header such as `If-Match`, a body field such as `_rev`, a query
 * parameter). A record frozen from a source (`request.source`) is written there alone (a source no longer declared
 * refuses it unsent); else the sources are tried in order; a 404 moves on to the next, 404 everywhere is a `missing`
 * conflict, unless one was an HTML page (a path with no route: `rejected`, see `pageNotFound`). Anything without a durable answer (5xx, timeout, network error, redirect, a 2xx body that cannot
 * be read) is `unknown`: the write may have happened, except a connection never made (`not_sent`). A 202 Accepted is `unknown` too (`accepted`): the write
 * is queued upstream, and will likely happen after the answer.
 */
export async function writeRecord(ctx: HttpContext, request: WriteRequest): Promise<WriteOutcome> {
  const http = request.http
  if (!http) throw new WarrantError('invalid_request', 'an http write needs request.http (method, path, body)')
  const method = http.method.toUpperCase()
  if (!WRITE_METHODS.has(method)) throw new WarrantError('invalid_request', `write method ${http.method} is not one of POST, PUT, PATCH, DELETE`)
  assertRelativePath(http.path)
  const style = http.style ?? 'patch'
  const placement = http.version ?? (http.ifMatch ? { in: 'header' as const, name: 'If-Match' } : { in: 'none' as const })
  // A replacing write carries the version of the representation it sends back, whatever was frozen.
  const version = style === 'replace' ? (request.current?.version ?? '') : request.expectedVersion
  if (placement.in !== 'none' && version === '')
    throw new WarrantError('invalid_request', `record "${request.id}" has no version to send (${placementText(placement)}); a conditional write is impossible`)
  let payload = style === 'replace' ? replacement(ctx, request) : http.body
  if (placement.in === 'body') payload = withBodyVersion(payload, placement.path, version)
  const headers: Record<string, string> = {}
  if (payload !== undefined) headers['content-type'] = 'application/json'
  if (placement.in === 'header') headers[placement.name.toLowerCase()] = version
  const body = payload === undefined ? undefined : JSON.stringify(payload)
  const endpoint = writeEndpoint(ctx.resource, method, http.path, request.id)
  const query: [string, string][] = placement.in === 'query' ? [[placement.param, version]] : []
  // an upstream refusing the write may echo what it received, denied fields included: never quoted back
  const denied = deniedValuesOf(ctx, request.current)

  // a record frozen from one source is written there alone; one no longer declared is never written elsewhere
  if (request.source !== undefined && !ctx.sourceNames.includes(request.source))
    throw new WarrantError('invalid_request', `${undeclaredSource(request.id, request.source, ctx.sourceNames)}; nothing was sent`)
  const sources = request.source === undefined ? ctx.sourceNames : [request.source]
  let routeless: string | null = null
  // what the last source said with its 404 (its body, scrubbed): a refusal is judged on its words too
  let notFound = ''
  for (const source of sources) {
    const spec: CallSpec = {
      source,
      method,
      endpoint,
      targetId: request.id,
      url: resolveUnderBase(ctx.baseOf(source), http.path, query),
      headers,
      ...(body === undefined ? {} : { body }),
      ...(request.signal ? { signal: request.signal } : {}),
    }
    const result = await ctx.send(spec)
    if (result.kind === 'response' && result.status === 404) {
      // a web page for a path with no route (the action's write.path) is no word on the record: nothing was
      // written there, and if no source takes the write the refusal is that page, never the record's absence
      routeless ??= pageNotFound(source, result.status, result.headers, result.body, "the action's write.path")
      ctx.report(spec, result, 'not_found')
      notFound = statusMessage(ctx, source, result.status, result.body, 'answered', denied)
      continue
    }
    const outcome = interpret(ctx, source, request.id, result, http.newVersion, denied, placement.in === 'header' && WEAK_ETAG.test(version))
    ctx.report(spec, result, outcome.kind)
    return outcome
  }
  if (routeless !== null) return { kind: 'rejected', status: 404, message: routeless }
  return { kind: 'conflict', reason: 'missing', status: 404, message: `record "${request.id}" was not found on ${request.source === undefined ? 'any source' : 'its source'} (${sources.join(', ')})${notFound === '' ? '' : `; ${notFound}`}` }
}

/**
 * The body of a replacing write: the whole representation as re-read, with each set field at its path. It
 * is a copy held for this one request; it is never logged or returned.
 */
function replacement(ctx: HttpContext, request: WriteRequest): Record<string, unknown> {
  const representation = request.current?.representation
  if (representation === null || typeof representation !== 'object' || Array.isArray(representation))
    throw new WarrantError('invalid_request', `a replacing write of "${request.id}" needs the record as re-read just before it (its whole representation)`)
  // JSON.parse rounded a number of it: sent back, that field would change upstream though no action set it
  if (request.current?.representationRounded)
    throw new WarrantError(
      'invalid_request',
      `record "${request.id}" holds a number with more digits than a JSON number keeps (a 64-bit integer, a long decimal); replacing it would write that value back rounded (use a write that sends only the set fields, or have the upstream send such numbers as strings)`,
    )
  const text = JSON.stringify(representation)
  // The redactor replaced the credential wherever it appeared: writing that back would change the record.
  if (text.includes(REDACTED))
    throw new WarrantError('invalid_request', `record "${request.id}" contains the redaction marker ${REDACTED}; replacing it would write the marker back over the original value`)
  const body = JSON.parse(text) as Record<string, unknown>
  for (const [field, value] of Object.entries(request.set)) {
    try {
      writePath(body, fieldPath(ctx, field), value)
    } catch (error) {
      throw new WarrantError('invalid_request', `set field "${field}" cannot be applied to record "${request.id}": ${(error as Error).message}`)
    }
  }
  return body
}

function withBodyVersion(payload: unknown, path: string, version: string): Record<string, unknown> {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    throw new WarrantError('invalid_request', `the version goes in body field "${path}", but the write body is not a JSON object`)
  const body = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>
  try {
    writePath(body, path, version)
  } catch (error) {
    throw new WarrantError('invalid_request', `the version cannot be put in the body: ${(error as Error).message}`)
  }
  return body
}

function placementText(placement: NonNullable<HttpWrite['version']>): string {
  switch (placement.in) {
    case 'header':
      return `header ${placement.name}`
    case 'body':
      return `body field ${placement.path}`
    case 'query':
      return `query parameter ${placement.param}`
    case 'none':
      return 'nowhere'
  }
}

function interpret(ctx: HttpContext, source: string, id: string, result: UpstreamExchange, newVersion: HttpWrite['newVersion'], denied: readonly string[], weak: boolean): WriteOutcome {
  const failure = failureMessage(ctx, source, result)
  if (failure !== null || result.kind !== 'response') {
    // an answer whose status came and whose body was cut or undecodable: the upstream got the write and answered
    const why = failure ?? `source "${source}" gave no answer`
    // no connection was ever made (the client saw it never connect, on a new socket): not a byte of the write
    // left the gateway, so there is nothing for a person to reconcile
    if ((result.kind === 'network' && result.reach?.stage === 'connecting') || (result.kind === 'timeout' && result.connecting)) return { kind: 'not_sent', message: `${why}; no connection was made, so the write was never sent` }
    const answered = answeredStatus(result)
    if (answered === undefined) return { kind: 'unknown', message: `${why}; the write may or may not have happened` }
    return { kind: 'unknown', status: answered, message: `${why}; the write reached the upstream and may have been applied, but its answer cannot be read` }
  }
  const { status, headers, body } = result
  const parsed = parseJsonBody(body)
  const message = (what: string) => statusMessage(ctx, source, status, body, what, denied)

  // Taken, not done: whatever the body says is what the upstream means to do, and a read now may be before it.
  if (status === 202)
    return { kind: 'unknown', status, accepted: true, message: `source "${source}" answered 202 Accepted: it took the write to apply it later, so its answer neither proves nor contradicts the effect` }
  // Done, but its answer rewritten on the way (a transforming proxy): neither its body nor its headers are the
  // upstream's word on the record or its version, so the record is re-read and judged.
  if (status === 203) return { kind: 'written', status, record: null }
  if (status >= 200 && status < 300) {
    if (body !== null && body.trim() === '') {
      const stated = statedVersion(ctx, newVersion, headers, undefined)
      return { kind: 'written', status, record: null, ...(stated === null ? {} : { newVersion: stated }) }
    }
    if (!parsed.ok) return { kind: 'unknown', status, message: `${notJsonMessage(source, result, parsed)}; the write may or may not have happened` }
    const value = ctx.redact.deep(parsed.value)
    // a key named twice (`"role":"member", …, "role":"viewer"`): the answer says neither value for sure, so
    // nothing of its body is taken as the record or its version; the record is re-read and judged
    if (parsed.duplicates.length > 0) {
      const stated = statedVersion(ctx, newVersion, headers, undefined)
      return { kind: 'written', status, record: null, body: value, ...(stated === null ? {} : { newVersion: stated }) }
    }
    // a body saying at its top level that the request failed (`errors` beside the record, `ok: false`): the record
    // there is what the upstream meant to do, not what it holds, and so is a version in it; re-read and judged
    const failureInBody = errorInBody(value, answerPaths(ctx))
    if (failureInBody !== null) return { kind: 'written', status, record: null, body: value, failureInBody }
    const stated = statedVersion(ctx, newVersion, headers, value)
    return { kind: 'written', status, ...answerRecord(ctx, id, value, headers.get('etag'), parsed.rounded), body: value, ...(stated === null ? {} : { newVersion: stated }) }
  }
  // RFC 9110 §13.1.1: If-Match compares strongly, so a conforming server refuses a weak tag whatever the record
  // holds; a lenient one compares it as text (the write probe tells which). The refusal says so, not only "changed".
  if (status === 412)
    return { kind: 'conflict', reason: 'version_changed', status, message: `${message('refused the version (If-Match) with')}${weak ? WEAK_412 : ''}` }
  if (status === 409) return { kind: 'conflict', reason: 'precondition_failed', status, message: message('reported a conflict:') }
  if (status === 401 || status === 403) return { kind: 'unauthorized', status, message: message('refused the credential with') }
  if (status === 429) return { kind: 'rate_limited', status, ...writeRateLimit(source, headers, ctx.now()) }
  if (isRedirect(status))
    return { kind: 'unknown', status, message: `source "${source}" answered the write with a redirect (${status}), which is never followed` }
  if (status >= 400 && status < 500)
    return { kind: 'rejected', status, message: message('rejected the write with'), ...(parsed.ok ? { body: ctx.redact.deep(deniedScrubber(ctx, denied).json(parsed.value)) } : {}) }
  return { kind: 'unknown', status, message: `${message('answered')}; the write may or may not have happened` }
}

/**
 * The record a write's answer carries: the target (same id), or another record (its id: a contradicted
 * effect), or neither (a summary such as `{ok, rev}`, a wrapper, a declared field mistyped: the record is re-read).
 */
function answerRecord(ctx: HttpContext, id: string, value: unknown, etag: string | null, rounded: ReadonlySet<number>): { readonly record: SourceRecord | null; readonly otherRecordId?: string } {
  const made = toRecord(ctx, value, etag, ctx.config.get.record_path, rounded)
  // an answer naming another record is one even when its version is unusable (no ETag on the answer)
  if (!('record' in made)) return made.id !== undefined && made.id !== id ? { record: null, otherRecordId: made.id } : { record: null }
  if (made.record.id !== id) return { record: null, otherRecordId: made.record.id }
  // a declared field of another type than declared (a number as a string) is not the record as a read takes it:
  // a read of it would refuse the record (shapeProblem), so the record is re-read and judged as any read is
  if (made.mistyped.length > 0) return { record: null }
  // a version no store keeps exactly (a NUL, a lone surrogate) is not one to record: the record is re-read and judged
  if (unstorableKey(made.record.version)) return { record: null }
  const representation = readPath(value, ctx.config.get.record_path)
  return { record: withRepresentation(made.record, representation, holdsRounded(representation, rounded)) }
}

/** The members a write's answer is read at (the record, its declared fields): what the config says they are, never a failure flag. */
function answerPaths(ctx: HttpContext): string[] {
  const recordPath = ctx.config.get.record_path
  if (recordPath !== '') return [recordPath]
  return Object.keys(ctx.resource.fields).map((field) => fieldPath(ctx, field))
}

/** The new version where `write.new_version` says the answer carries it, or null. */
function statedVersion(ctx: HttpContext, from: HttpWrite['newVersion'], headers: Headers, value: unknown): string | null {
  if (!from) return null
  if (from.from === 'header') {
    const header = headers.get(from.name)
    return header === null ? null : ctx.redact.text(header)
  }
  const stated = value === undefined ? null : scalarText(readPath(value, from.path))
  // a version no store keeps exactly is not recorded as the new version: the record's own is used, or it is re-read
  return stated !== null && unstorableKey(stated) ? null : stated
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
