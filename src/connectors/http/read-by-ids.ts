import { holdsRounded } from '../../contract/index.js'
import { isWarrantError, quotedKey } from '../../contract/index.js'
import type { ReadByIdsResult, SourceRecord } from '../connector.js'
import { mapBounded } from './bounded-concurrency.js'
import { readInBatches } from './read-batch.js'
import { withRepresentation } from '../representation.js'
import type { CallSpec, HttpContext } from './context.js'
import { readPath } from './json-path.js'
import { shapeProblem, toRecord } from './record.js'
import { duplicatesProblem } from './duplicate-members.js'
import { answeredStatus, failureMessage, isRedirect, notJsonMessage, parseJsonBody, readRateLimit, retryAfterOf, statusMessage } from './upstream-answer.js'
import { renderPathTemplate, resolveUnderBase } from './url-guard.js'
import { pageNotFound } from './page-not-found.js'
import { unfinishedAnswer } from './unfinished-answer.js'
import { undeclaredSource } from './frozen-source.js'


type OneRead =
  | { readonly kind: 'found'; readonly record: SourceRecord; readonly source: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'failed'; readonly message: string; readonly status?: number; readonly retryAfterSeconds?: number; readonly heldBy?: readonly string[] }

/**
 * Reads records by id through `get.path`, from every source: one holds it, or (two holding it) it fails. 404 or 410 on every
 * source means missing (the API's own 404: an HTML page in its place is a failure, see `pageNotFound`); any other failure on a
 * source makes the id failed, even where another source has it (the failed one may hold it too).
 * An id `sourceOf` gives a source (the one its selection member was frozen from) is read from that source alone:
 * (source, id) is its address, so what the others hold does not matter; a source the resource no longer declares
 * (renamed, removed) fails it, naming it, and it is never read elsewhere.
 * With `get.batch`, several ids are first read per request (read-batch.ts); what those answers do not prove
 * is read here alone, so absence is only ever said by `get.path`.
 */
export async function readRecordsByIds(ctx: HttpContext, ids: readonly string[], signal?: AbortSignal, sourceOf?: ReadonlyMap<string, string>): Promise<ReadByIdsResult> {
  const result: Reads = { records: new Map(), missing: [], failed: [], sources: new Map() }
  const bySource = new Map<string, string[]>()
  const unaddressed: string[] = []
  for (const id of new Set(ids)) {
    const source = sourceOf?.get(id)
    if (source === undefined) unaddressed.push(id)
    else if (!ctx.sourceNames.includes(source)) result.failed.push({ id, message: undeclaredSource(id, source, ctx.sourceNames) })
    else bySource.set(source, [...(bySource.get(source) ?? []), id])
  }
  for (const [source, group] of bySource) await readGroup({ ...ctx, sourceNames: [source] }, group, result, signal)
  await readGroup(ctx, unaddressed, result, signal)
  return result
}

type Failure = { readonly message: string; readonly status?: number; readonly retryAfterSeconds?: number; readonly heldBy?: readonly string[] }
type Reads = { readonly records: Map<string, SourceRecord>; readonly missing: string[]; readonly failed: ({ readonly id: string } & Failure)[]; readonly sources: Map<string, string> }

/** `ids` read from the sources of `ctx` (all of them, or the one they were frozen from), into `into`. */
async function readGroup(ctx: HttpContext, ids: readonly string[], into: Reads, signal?: AbortSignal): Promise<void> {
  let alone = ids
  const batch = ctx.config.get.batch
  if (batch && ids.length > 1) {
    const readAlone = async (source: string, id: string) => {
      const read = await readFrom(ctx, source, id, signal)
      return read.kind === 'found' ? read.record : null
    }
    const read = await readInBatches(ctx, batch, ids, readAlone, signal)
    // a batch answer found the id on one source, and asked no other for it: each other one is asked alone
    const elsewhere = await mapBounded([...read.foundOn], ctx.config.read_concurrency, ([id, source]) => heldElsewhere(ctx, id, source, signal))
    const doubtful = new Map(elsewhere.flatMap((e) => (e.failure === null ? [] : [[e.id, e.failure] as const])))
    for (const [id, record] of read.records) {
      const failure = doubtful.get(id)
      if (failure !== undefined) into.failed.push({ id, ...failure })
      else {
        into.records.set(id, record)
        into.sources.set(id, read.foundOn.get(id)!)
      }
    }
    for (const [id, limit] of read.rateLimited) into.failed.push({ id, message: limit.message, status: limit.status, ...(limit.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: limit.retryAfterSeconds }) })
    alone = ids.filter((id) => !read.records.has(id) && !read.rateLimited.has(id))
  }
  const reads = await mapBounded(alone, ctx.config.read_concurrency, (id) => readOne(ctx, id, signal))
  reads.forEach((read, i) => {
    const id = alone[i]!
    if (read.kind === 'found') {
      into.records.set(id, read.record)
      into.sources.set(id, read.source)
    } else if (read.kind === 'missing') into.missing.push(id)
    else into.failed.push({ id, ...failureOf(read) })
  })
}


function failureOf(read: Extract<OneRead, { kind: 'failed' }>): Failure {
  return {
    message: read.message,
    ...(read.status === undefined ? {} : { status: read.status }),
    ...(read.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: read.retryAfterSeconds }),
    ...(read.heldBy === undefined ? {} : { heldBy: read.heldBy }),
  }
}

/**
 * One id from every source. Reads and writes address a record by id alone (a write goes to the first source that
 * has it), so an id two sources hold names neither: it fails, naming them, rather than handing over the first
 * source's record, which a write would then change in place of the other.
 */
async function readOne(ctx: HttpContext, id: string, signal?: AbortSignal): Promise<OneRead> {
  let firstFailure: { readonly source: string; readonly read: Extract<OneRead, { kind: 'failed' }> } | null = null
  let found: Extract<OneRead, { kind: 'found' }> | null = null
  const holders: string[] = []
  for (const source of ctx.sourceNames) {
    const read = await readFrom(ctx, source, id, signal)
    if (read.kind === 'found') {
      found ??= read
      holders.push(source)
    }
    if (read.kind === 'failed') firstFailure ??= { source, read }
  }
  if (holders.length > 1) return { kind: 'failed', message: heldByMany(id, holders), heldBy: holders }
  // found on one source, but another could not be asked: it may hold the id too, so the record found is not known to be the one
  if (found !== null && firstFailure !== null) return { kind: 'failed', ...unaskedElsewhere(id, holders[0]!, firstFailure.source, firstFailure.read) }
  return found ?? firstFailure?.read ?? { kind: 'missing' }
}

/**
 * Whether a source other than `source` also holds `id`, or could not say: the failure that tells so, else null.
 */
async function heldElsewhere(ctx: HttpContext, id: string, source: string, signal?: AbortSignal): Promise<{ readonly id: string; readonly failure: Failure | null }> {
  const holders = [source]
  let unasked: Failure | null = null
  for (const other of ctx.sourceNames) {
    if (other === source) continue
    const read = await readFrom(ctx, other, id, signal)
    if (read.kind === 'found') holders.push(other)
    if (read.kind === 'failed') unasked ??= unaskedElsewhere(id, source, other, read)
  }
  if (holders.length > 1) {
    const heldBy = ctx.sourceNames.filter((s) => holders.includes(s))
    return { id, failure: { message: heldByMany(id, heldBy), heldBy } }
  }
  return { id, failure: unasked }
}

/**
 * An id found on `holder` while `other`'s read of it failed: whether `other` holds it too is unknown, and a read or
 * write by id could then name the other record. The other source's status and wait ride along (a 429 is read again later).
 */
function unaskedElsewhere(id: string, holder: string, other: string, read: Extract<OneRead, { kind: 'failed' }>): Failure {
  const { message, ...rest } = failureOf(read)
  return {
    ...rest,
    message: `id ${quotedKey(id)} was found on source "${holder}", but source "${other}" could not be read for it (${message}): whether "${other}" holds that id too is unknown, and a read or a write by id cannot tell two such records apart, so it is not read`,
  }
}

function heldByMany(id: string, sources: readonly string[]): string {
  const named = sources.map((s) => `"${s}"`)
  return `id ${quotedKey(id)} names a record on sources ${named.slice(0, -1).join(', ')} and ${named.at(-1)}: a read or a write by id reaches the first source that has it, so it cannot tell them apart and neither is read (the ids of a resource's sources must be unique across them)`
}

/** One id read from one source by `get.path`. */
async function readFrom(ctx: HttpContext, source: string, id: string, signal?: AbortSignal): Promise<OneRead> {
  const template = ctx.config.get.path
  let path: string
  try {
    path = renderPathTemplate(template, { id })
  } catch (error) {
    if (isWarrantError(error)) return { kind: 'failed', message: `id cannot be read: ${error.message}` }
    throw error
  }
  const spec: CallSpec = {
    source,
    method: 'GET',
    endpoint: template,
    targetId: id,
    url: resolveUnderBase(ctx.baseOf(source), path),
    ...(signal ? { signal } : {}),
  }
  const result = await ctx.send(spec)
  const read = interpret(ctx, source, id, result)
  ctx.report(spec, result, read.kind === 'missing' ? 'not_found' : read.kind)
  return read
}

function interpret(ctx: HttpContext, source: string, id: string, result: Awaited<ReturnType<HttpContext['send']>>): OneRead {
  const failure = failureMessage(ctx, source, result)
  if (failure !== null || result.kind !== 'response') {
    const answered = answeredStatus(result)
    return { kind: 'failed', message: failure ?? `source "${source}" gave no answer`, ...(answered === undefined ? {} : { status: answered }) }
  }
  const { status, headers, body } = result
  const page = pageNotFound(source, status, headers, body, 'connector.get.path')
  if (page !== null) return { kind: 'failed', status, message: page }
  if (status === 404 || status === 410) return { kind: 'missing' }
  if (status === 429) return { kind: 'failed', status, ...readRateLimit(source, headers, ctx.now()) }
  if (isRedirect(status)) return { kind: 'failed', status, message: `source "${source}" answered with a redirect (${status}); redirects are never followed` }
  if (status === 503) {
    // "unavailable, come back then": passed on like a 429's, so the caller (an operation) waits and reads again
    const wait = retryAfterOf(headers, ctx.now())
    const message = statusMessage(ctx, source, status, body)
    return wait === null ? { kind: 'failed', status, message } : { kind: 'failed', status, message: `${message}; retry after ${wait} s`, retryAfterSeconds: wait }
  }
  if (status < 200 || status >= 300) return { kind: 'failed', status, message: statusMessage(ctx, source, status, body) }
  const unfinished = unfinishedAnswer(source, status, headers)
  if (unfinished !== null) return { kind: 'failed', status, message: unfinished }
  const parsed = parseJsonBody(body)
  if (!parsed.ok) return { kind: 'failed', status, message: notJsonMessage(source, result, parsed) }
  // the whole answer rides along for a replacing write, which would send one value of a key named twice back
  if (parsed.duplicates.length > 0) return { kind: 'failed', status, message: `source "${source}": unexpected record: ${duplicatesProblem(parsed.duplicates)}` }
  const value = ctx.redact.deep(parsed.value)
  const made = toRecord(ctx, value, headers.get('etag'), ctx.config.get.record_path, parsed.rounded)
  if ('problem' in made) return { kind: 'failed', status, message: `source "${source}": unexpected record: ${made.problem}` }
  if (made.absent.length > 0 || made.mistyped.length > 0)
    return { kind: 'failed', status, message: `source "${source}": record ${quotedKey(made.record.id)} ${shapeProblem(ctx, made.absent, made.mistyped)}` }
  if (made.record.id !== id)
    return { kind: 'failed', status, message: `source "${source}" answered for id "${id}" with a record whose id is "${made.record.id}"` }
  // The whole object rides along for the write path (a replacing write, the check after a write).
  const representation = readPath(value, ctx.config.get.record_path)
  return { kind: 'found', source, record: withRepresentation(made.record, representation, holdsRounded(representation, parsed.rounded)) }
}
