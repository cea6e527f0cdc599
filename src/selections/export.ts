import { WarrantError, createListDigest, isWarrantError } from '../contract/index.js'
import { csvLine } from './csv-cell.js'
import { memberView } from './paging.js'
import type { ExportFormat } from './schemas.js'
import type { SelectionMember, SelectionRecord } from './selection-service.js'

/** Members fetched per export page. */
export const EXPORT_PAGE = 1000

/** How long an export waits, by default, for a client that reads nothing of it before cutting it. */
export const DEFAULT_EXPORT_STALL_MS = 60_000

/** The `format` of an NDJSON export's first and last lines. */
export const MANIFEST_FORMAT = 'warrant-selection-export/1'

/** Text handed to the connection per pull, at most (a row longer than it goes alone): how finely a client's reading is seen. */
const CHUNK_CHARS = 64 * 1024

/**
 * Why an export stopped before its end, for its audit row: what was read did not hash to the digest
 * (`digest_mismatch`), the store failed to answer a page (`store_error`), a value CSV cannot carry
 * (`value_unwritable`), the client closed the connection (`client_gone`), or it read nothing for the stall timeout
 * and the gateway cut it (`client_stalled`).
 */
export type ExportStop = 'digest_mismatch' | 'store_error' | 'value_unwritable' | 'client_gone' | 'client_stalled'

/** How an export ended, handed to the surface that records it: the audit row says what the file held. */
export interface ExportEnd {
  readonly format: ExportFormat
  /** member rows handed to the connection (a client that left may not have received the last of them) */
  readonly rows_sent: number
  /** the frozen count and digest the rows were to add up to */
  readonly count: number
  readonly digest: string
  /** the whole file was sent: every member, checked against the digest (and NDJSON's end line) */
  readonly end_reached: boolean
  readonly stopped: ExportStop | null
  /** the error's stable code, when an error stopped it */
  readonly error?: string
}

/** The outcome word every streamed answer's audit row uses (`ok`, `client_closed`, `failed`): a stalled client's export was cut, `failed`. */
export function exportOutcome(end: ExportEnd): 'ok' | 'client_closed' | 'failed' {
  return end.end_reached ? 'ok' : end.stopped === 'client_gone' ? 'client_closed' : 'failed'
}

/** What the stream says of the selection's upstream, whom it tells how it ended, and how long it waits for its client. */
export interface ManifestStreamOptions {
  readonly upstreamMoved: string | null
  readonly onEnd?: ((end: ExportEnd) => Promise<void>) | undefined
  /** how long the stream waits for its client to take what it handed over before it fails; default DEFAULT_EXPORT_STALL_MS */
  readonly stallMs?: number | undefined
}

/**
 * The whole manifest as a byte stream, one page of members per store read, handed to the connection at most
 * CHUNK_CHARS at a time: memory holds one page, whatever the size of the selection. The file says what it is, since
 * the HTTP headers are lost once it is saved:
 * - NDJSON: a first line with the selection's facts (completeness and its reasons, what each exclusion rule
 *   left out, count, digest), one member per line exactly as the records pages give them, and an end line
 *   (`end: true`, rows, digest) written only once every member was sent and they hash to the digest: a file
 *   without it was cut short;
 * - CSV: a header row, then one row per member; `selection_complete` and `selection_state` first and the other
 *   facts (`selection_expires_at` among them) last on every row (a metadata line would be read as a member by every CSV reader; a column survives sorting, filtering
 *   and copying rows out, and a row count short of `selection_count` shows a file cut short).
 *
 * `onEnd` is called once, however the stream ends: when the connection has taken every row, before the end (NDJSON's
 * end line) leaves; else when it fails, the client leaves, or the client takes nothing for `stallMs` (the stream then
 * fails, and the server closes the connection). The response is long gone by then, so this is where its audit row is
 * written: a row written when the answer began would say an export succeeded that was cut. Each store page is its
 * own statement: a client that stops reading holds no store read open, only the page being sent, until it is cut.
 */
export function manifestStream(
  format: ExportFormat,
  selection: SelectionRecord,
  page: (afterOrd: number, limit: number) => Promise<readonly SelectionMember[]>,
  options: ManifestStreamOptions,
): ReadableStream<Uint8Array> {
  const onEnd = options.onEnd ?? (async () => undefined)
  const stallMs = options.stallMs ?? DEFAULT_EXPORT_STALL_MS
  const encoder = new TextEncoder()
  const fields = selection.fields
  const facts = manifestFacts(selection, options.upstreamMoved)
  const columns = csvColumns(fields)
  const leading = columns.leading(facts)
  const trailing = columns.trailing(facts)
  const digest = createListDigest()
  let rows = 0
  let sent = 0
  let after = 0
  let started = false
  let ended = false
  let cancelled = false
  /** the rows of the page read last not yet handed over, and whether it was the last page (checked against the digest) */
  let pending: string[] = []
  let taken = 0
  let lastPage = false
  let readDigest = ''
  /** armed while the stream waits for its client to take what it handed over; cleared by the client's next pull */
  let waiting: ReturnType<typeof setTimeout> | undefined
  const end = async (endReached: boolean, stopped: ExportStop | null, error?: unknown) => {
    if (ended) return
    ended = true
    clearTimeout(waiting)
    pending = []
    const code = error === undefined ? undefined : isWarrantError(error) ? error.code : 'internal'
    await onEnd({ format, rows_sent: sent, count: selection.count, digest: selection.digest, end_reached: endReached, stopped, ...(code ? { error: code } : {}) })
  }
  /** Records why the stream stops, then fails it: a file without its end reads as cut short. */
  const fail = async (stopped: ExportStop, error: unknown): Promise<never> => {
    await end(false, stopped, error)
    throw error
  }
  /**
   * The client took nothing for `stallMs`: recorded, then the stream fails (the file has no end), and the server lets
   * go of the connection with what its buffers held (@hono/node-server destroys the socket of a failed stream).
   * Judged after the loop's I/O of this turn (setImmediate): a process that was itself held up (a long GC, a busy CPU)
   * first hands the client's reads, which came in meanwhile, to the stream.
   */
  const waitForClient = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (waiting !== timer || ended) return
          const recorded = end(false, 'client_stalled').catch(() => undefined)
          controller.error(new Error(`the client of the export of ${selection.selection_id} read nothing for ${stallMs} ms: cut`))
          return recorded
        }),
      stallMs,
    )
    timer.unref?.()
    waiting = timer
  }
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        clearTimeout(waiting)
        waiting = undefined
        if (ended) return
        if (!started) {
          started = true
          controller.enqueue(encoder.encode(format === 'csv' ? csvLine(columns.header) : `${JSON.stringify(facts)}\n`))
          return waitForClient(controller)
        }
        if (taken === pending.length && !lastPage) {
          const members = await page(after, EXPORT_PAGE).catch((error: unknown) => fail('store_error', error))
          // the client left while the page was read: cancel() recorded it, and nothing more can be sent
          if (cancelled) return
          for (const m of members) digest.add({ id: m.id, version: m.version })
          rows += members.length
          try {
            pending =
              format === 'csv'
                ? members.map((m) => csvLine([...leading, ...fields.map((f) => m.fields[f]), m.version, ...trailing]))
                : members.map((m) => `${JSON.stringify(memberView(m, fields))}\n`)
          } catch (error) {
            return fail('value_unwritable', error)
          }
          taken = 0
          if (members.length > 0) after = members[members.length - 1]!.ord
          if (members.length < EXPORT_PAGE) {
            // what was read is not the frozen set: the stream fails before the page is sent, so the file reads as cut short
            readDigest = digest.finish()
            if (rows !== selection.count || readDigest !== selection.digest)
              return fail('digest_mismatch', new WarrantError('internal', `the export of ${selection.selection_id} read ${rows} member(s) hashing to ${readDigest}, not the ${selection.count} frozen (${selection.digest})`))
            lastPage = true
          }
        }
        if (taken < pending.length) {
          const from = taken
          let size = 0
          while (taken < pending.length && (taken === from || size + pending[taken]!.length <= CHUNK_CHARS)) size += pending[taken++]!.length
          controller.enqueue(encoder.encode(pending.slice(from, taken).join('')))
          sent += taken - from
          return waitForClient(controller)
        }
        // the connection took every row: the audit row is written before the end leaves, as a streamed search's is
        await end(true, null)
        if (cancelled) return
        if (format === 'ndjson') controller.enqueue(encoder.encode(`${JSON.stringify({ format: MANIFEST_FORMAT, end: true, rows, digest: readDigest })}\n`))
        controller.close()
      },
      async cancel() {
        cancelled = true
        await end(false, 'client_gone')
      },
    },
    { highWaterMark: 1 },
  )
}

/**
 * The first line of an NDJSON export: what a reader must know before it acts on any member. `upstream_moved` says why
 * the members are no longer where the resource's connector points (its base_url, database or table changed since the
 * freeze, the environment label left as it was), or null: the `environment` is where they were read.
 */
function manifestFacts(s: SelectionRecord, upstreamMoved: string | null) {
  return {
    format: MANIFEST_FORMAT,
    selection_id: s.selection_id,
    resource: s.resource,
    environment: s.environment,
    upstream_moved: upstreamMoved,
    state: s.state,
    expires_at: s.expires_at,
    complete: s.complete,
    status: s.completeness.status,
    incomplete_reasons: [...s.completeness.incomplete_reasons],
    exclusions: s.exclusions.map((e) => ({ rule: e.rule, filter: e.filter, count: e.count, records_url: `/v1/selections/${s.selection_id}/excluded?rule=${encodeURIComponent(e.rule)}` })),
    excluded_records: 'not in this file: each exclusion rule names how many records it removed, and where to list them',
    count: s.count,
    digest: s.digest,
    digest_of: 'the members in this order, each {id, version}',
    fields: [...s.fields],
    withheld_fields: [...s.withheld_fields],
  }
}

/** The facts every CSV row carries, under these names always: a reader's check of `selection_complete` must find the fact. */
const FIRST_FACTS = ['selection_complete', 'selection_state'] as const
const LAST_FACTS = [
  'selection_incomplete_reasons',
  'selection_excluded',
  'selection_withheld_fields',
  'selection_environment',
  'selection_upstream_moved',
  'selection_expires_at',
  'selection_count',
  'selection_digest',
] as const

/**
 * The CSV's columns: the facts that must not be missed first, the review fields, the frozen version, the rest of the
 * facts. A review field named like a fact column is the one renamed (a leading `_`), never the fact: otherwise a
 * resource with a field `selection_complete` would put a record's value where every reader looks for the selection's.
 */
function csvColumns(reviewFields: readonly string[]) {
  const first = [...FIRST_FACTS]
  const version = 'frozen_version'
  const rest = [...LAST_FACTS]
  const taken: string[] = [...first, version, ...rest]
  const fieldColumns = reviewFields.map((f) => {
    const out = uniqueColumn(f, taken)
    taken.push(out)
    return out
  })
  return {
    header: [...first, ...fieldColumns, version, ...rest],
    // whether the rows may be acted on at all comes first: an incomplete or expired selection must not read as usable
    leading: (f: ReturnType<typeof manifestFacts>) => [f.complete, f.state],
    trailing: (f: ReturnType<typeof manifestFacts>) => [
      f.incomplete_reasons.map((r) => `${r.code}${r.limit ? ` (${r.limit.name}=${r.limit.value})` : ''}`).join('; '),
      f.exclusions.map((e) => `${e.rule}=${e.count}`).join('; '),
      // a column missing from the header because the resource denies it now, not because it was never there
      f.withheld_fields.join('; '),
      f.environment,
      f.upstream_moved,
      f.expires_at,
      f.count,
      f.digest,
    ],
  }
}

function uniqueColumn(name: string, taken: readonly string[]): string {
  let out = name
  while (taken.includes(out)) out = `_${out}`
  return out
}

/** What a manifest in `format` is sent as, its GET's stream and a HEAD's headers alike: the media type and the file's name. */
export function manifestFile(selectionId: string, format: ExportFormat): { readonly contentType: string; readonly filename: string } {
  return { contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8', filename: `${selectionId}.${format}` }
}

/**
 * The headers a streamed manifest is sent with, on every surface: a download, never cached, naming the
 * selection, its count, digest and completeness so a saved file can be checked against what was approved.
 */
export function manifestHeaders(exported: {
  readonly contentType: string
  readonly filename: string
  readonly selection: { readonly selection_id: string; readonly count: number; readonly digest: string; readonly complete: boolean }
}): Record<string, string> {
  return {
    'content-type': exported.contentType,
    'content-disposition': `attachment; filename="${exported.filename}"`,
    'cache-control': 'no-store',
    'x-warrant-selection-id': exported.selection.selection_id,
    'x-warrant-selection-count': String(exported.selection.count),
    'x-warrant-selection-digest': exported.selection.digest,
    'x-warrant-selection-complete': String(exported.selection.complete),
  }
}
