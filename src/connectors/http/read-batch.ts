import { holdsRounded } from '../../contract/index.js'
import type { HttpConnectorConfig } from '../../config/schema.js'
import { canonicalJson } from '../../contract/index.js'
import type { SourceRecord } from '../connector.js'
import { withRepresentation } from '../representation.js'
import { mapBounded } from './bounded-concurrency.js'
import type { CallSpec, HttpContext } from './context.js'
import { readPath } from './json-path.js'
import { toRecord } from './record.js'
import { parseJsonBody, readRateLimit, retryAfterOf, statusMessage, type RateLimit } from './upstream-answer.js'
import { resolveUnderBase } from './url-guard.js'
import { unfinishedAnswer } from './unfinished-answer.js'

type BatchConfig = NonNullable<HttpConnectorConfig['get']['batch']>

/** A 429, or a 503 with a usable Retry-After: the source said when to come back. */
export type BatchWait = RateLimit & { readonly status: number }

/** What one source's batch reads said: the records they carried, and the ids a 429 kept from being read. */
export interface BatchReads {
  readonly records: Map<string, SourceRecord>
  /** id → the 429 (or 503 naming a wait), for ids no source answered (they are not read again alone: the source said wait) */
  readonly rateLimited: Map<string, BatchWait>
  /** id → the source whose answer carried its record (the other sources were not asked for it) */
  readonly foundOn: Map<string, string>
}

/** Reads one id of one source by `get.path`: the record, or null when that read did not find it whole. */
export type ReadAlone = (source: string, id: string) => Promise<SourceRecord | null>

/**
 * Reads `ids` through `get.batch`, source by source in the configured order, `max_ids` at a time. Only what an
 * answer proves is kept: a record for an id that was asked, once, whole and well-formed. An id an answer leaves
 * out proves nothing (a list may page, or filter out what a read by id still finds), so the caller reads it
 * alone; so is every id of an answer that cannot be a by-ids answer: a failure, a body that is not the
 * configured shape, or a record that was not asked for (an upstream that ignores `ids_param` answers its
 * first page instead). A 429, or a 503 naming its wait, is not read alone: its ids fail with that wait.
 *
 * A list endpoint may answer a summary of each record. The write path trusts a record read here as whole (a
 * replacing write sends it back; the check after a write compares every field of it), so one record of every
 * answer is also read alone (`readAlone`) and must be the same JSON: else nothing of that answer is used.
 */
export async function readInBatches(ctx: HttpContext, batch: BatchConfig, ids: readonly string[], readAlone: ReadAlone, signal?: AbortSignal): Promise<BatchReads> {
  const records = new Map<string, SourceRecord>()
  const rateLimited = new Map<string, BatchWait>()
  const foundOn = new Map<string, string>()
  // a comma inside an id would split it in two under the comma encoding: such an id is only read alone
  let remaining = ids.filter((id) => batch.encoding !== 'comma' || !id.includes(','))
  for (const source of ctx.sourceNames) {
    if (remaining.length === 0) break
    const chunks: string[][] = []
    for (let at = 0; at < remaining.length; at += batch.max_ids) chunks.push(remaining.slice(at, at + batch.max_ids))
    const answers = await mapBounded(chunks, ctx.config.read_concurrency, (chunk) => readBatch(ctx, batch, source, chunk, readAlone, signal))
    answers.forEach((answer, i) => {
      if (answer.kind === 'records')
        for (const [id, record] of answer.records) {
          records.set(id, record)
          foundOn.set(id, source)
        }
      else if (answer.kind === 'rate_limited') for (const id of chunks[i]!) rateLimited.set(id, answer.limit)
    })
    remaining = remaining.filter((id) => !records.has(id))
  }
  for (const id of records.keys()) rateLimited.delete(id)
  return { records, rateLimited, foundOn }
}

type BatchAnswer =
  | { readonly kind: 'records'; readonly records: ReadonlyMap<string, SourceRecord> }
  | { readonly kind: 'rate_limited'; readonly limit: BatchWait }
  | { readonly kind: 'unanswered' }

async function readBatch(ctx: HttpContext, batch: BatchConfig, source: string, ids: readonly string[], readAlone: ReadAlone, signal?: AbortSignal): Promise<BatchAnswer> {
  const query: [string, string][] = Object.entries(batch.query)
  if (batch.encoding === 'comma') query.push([batch.ids_param, ids.join(',')])
  else for (const id of ids) query.push([batch.ids_param, id])
  const spec: CallSpec = {
    source,
    method: 'GET',
    endpoint: batch.path,
    url: resolveUnderBase(ctx.baseOf(source), batch.path, query),
    ids: ids.length,
    ...(signal ? { signal } : {}),
  }
  const result = await ctx.send(spec)
  let { answer, outcome } = interpret(ctx, batch, source, ids, result)
  const found = answer.kind === 'records' ? answer.records : null
  const sampled = found === null ? undefined : ids.find((id) => found.has(id))
  if (found !== null && sampled !== undefined) {
    const alone = await readAlone(source, sampled)
    // the same record, both ways: else the answer is a summary (or the record moved between the reads)
    if (alone === null || !sameJson(alone.representation, found.get(sampled)!.representation)) {
      answer = { kind: 'unanswered' }
      outcome = 'not_whole'
    }
  }
  ctx.report(spec, result, outcome)
  return answer
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b)
  } catch {
    return false
  }
}

function interpret(
  ctx: HttpContext,
  batch: BatchConfig,
  source: string,
  ids: readonly string[],
  result: Awaited<ReturnType<HttpContext['send']>>,
): { readonly answer: BatchAnswer; readonly outcome: string } {
  const unanswered = (outcome: string) => ({ answer: { kind: 'unanswered' } as const, outcome })
  // no answer (a timeout, an unreachable source, a body cut at the byte limit), or not a 2xx
  if (result.kind !== 'response') return unanswered('failed')
  const { status, headers, body } = result
  if (status === 429) return { answer: { kind: 'rate_limited', limit: { status, ...readRateLimit(source, headers, ctx.now()) } }, outcome: 'rate_limited' }
  // "unavailable, come back then", as a read by id and an operation take it: the batch's ids are not sent again
  // one request each (up to max_ids × read_concurrency) to a source that just named its wait
  const wait = status === 503 ? retryAfterOf(headers, ctx.now()) : null
  if (wait !== null)
    return { answer: { kind: 'rate_limited', limit: { status, message: `${statusMessage(ctx, source, status, body)}; retry after ${wait} s`, retryAfterSeconds: wait } }, outcome: 'rate_limited' }
  if (status < 200 || status >= 300) return unanswered('failed')
  if (unfinishedAnswer(source, status, headers) !== null) return unanswered('unfinished')
  const parsed = parseJsonBody(body)
  const items = parsed.ok ? readPath(ctx.redact.deep(parsed.value), batch.items_path) : undefined
  if (!Array.isArray(items) || !parsed.ok) return unanswered('unexpected')
  // a key named twice: which value the upstream means is unknown, so its records are read alone
  if (parsed.duplicates.length > 0) return unanswered('duplicate_key')
  const { rounded } = parsed

  const asked = new Set(ids)
  const records = new Map<string, SourceRecord>()
  const seen = new Set<string>()
  for (const item of items) {
    const made = toRecord(ctx, item, null, batch.record_path, rounded)
    // an item without a usable id cannot answer for any id; the ids it might have been are read alone
    if ('problem' in made) continue
    const id = made.record.id
    if (!asked.has(id)) return unanswered('foreign_id')
    // named twice: which one is the record? Neither is used
    if (seen.has(id)) {
      records.delete(id)
      continue
    }
    seen.add(id)
    // a record that is not whole (a declared field absent or mistyped, no version) is judged by its read alone
    if (made.absent.length > 0 || made.mistyped.length > 0) continue
    const representation = readPath(item, batch.record_path)
    records.set(id, withRepresentation(made.record, representation, holdsRounded(representation, rounded)))
  }
  return { answer: { kind: 'records', records }, outcome: records.size === ids.length ? 'found' : 'partial' }
}
