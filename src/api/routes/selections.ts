import type { OpenAPIHono } from '@hono/zod-openapi'
import { z } from 'zod'
import type { StreamEnd } from '../../audit/index.js'
import type { Gateway } from '../../gateway/index.js'
import {
  EXPORT_STARTED_ACTION,
  excludedPageQuerySchema,
  excludedPageSchema,
  exportFormatSchema,
  exportOutcome,
  exportStartedSummary,
  manifestFile,
  manifestHeaders,
  type ExportEnd,
  type SelectionRecord,
  memberPageQuerySchema,
  memberPageSchema,
  selectionRequestSchema,
  selectionViewSchema,
  createdSelectionViewSchema,
} from '../../selections/index.js'
import type { ApiEnv } from '../authenticate.js'
import { idempotencyKeyOf } from '../idempotency-key.js'
import { errors, jsonBody, jsonResponse, v1Route } from './v1-route.js'

const selectionParam = z.object({ id: z.string().min(1).max(200) })

const create = v1Route({
  method: 'post',
  path: '/v1/resources/{resource}/selections',
  summary: 'Freeze a selection: exact members (id, version) in id order, a digest, exclusions per rule, groups, completeness',
  request: {
    params: z.object({ resource: z.string().min(1).max(64) }),
    headers: z.object({
      'idempotency-key': z
        .string()
        .optional()
        .describe(
          'optional, 1 to 255 printable characters: the same key with the same request answers the selection the first one froze (200, created false, nothing walked again); with another request 422 idempotency_key_reused; while the first is still walking 409 idempotency_in_progress. A request that failed leaves the key free',
        ),
    }),
    body: jsonBody(selectionRequestSchema),
  },
  responses: {
    201: jsonResponse('the frozen selection and its first page of records', createdSelectionViewSchema),
    200: jsonResponse('the selection this Idempotency-Key already names (same request): handed back, not walked again', createdSelectionViewSchema),
    ...errors([400, 401, 403, 404, 409, 422, 502]),
  },
})

const show = v1Route({
  method: 'get',
  path: '/v1/selections/{id}',
  summary: 'A selection: resource, environment, selector, count, digest, exclusions, groups, completeness, first page',
  request: { params: selectionParam },
  responses: { 200: jsonResponse('the selection', selectionViewSchema), ...errors([401, 403, 404]) },
})

const records = v1Route({
  method: 'get',
  path: '/v1/selections/{id}/records',
  summary: 'A page of members in frozen order; paging never changes the set',
  request: { params: selectionParam, query: memberPageQuerySchema },
  responses: { 200: jsonResponse('a page of members', memberPageSchema), ...errors([400, 401, 403, 404]) },
})

const excluded = v1Route({
  method: 'get',
  path: '/v1/selections/{id}/excluded',
  summary: 'A page of the records one exclusion rule removed',
  request: { params: selectionParam, query: excludedPageQuerySchema },
  responses: { 200: jsonResponse('a page of excluded records', excludedPageSchema), ...errors([400, 401, 403, 404]) },
})

const exportManifest = v1Route({
  method: 'get',
  path: '/v1/selections/{id}/export',
  summary: 'The whole manifest, streamed: CSV (header row of review fields) or NDJSON (one member per line)',
  request: { params: selectionParam, query: z.strictObject({ format: exportFormatSchema.default('csv') }) },
  responses: {
    200: {
      description:
        'the manifest; X-Warrant-Selection-Count and X-Warrant-Selection-Digest name what it is. Its start is in the audit log before the first byte (selection.export_started) and its end when the stream ends; a client that reads nothing of it for server.export_stall_timeout_ms (default 60 s) is cut (the body has no end; stopped client_stalled)',
      content: { 'text/csv': { schema: z.string() }, 'application/x-ndjson': { schema: z.string() } },
    },
    ...errors([400, 401, 403, 404]),
  },
})

const recoveryViewSchema = selectionViewSchema.extend({ created: z.boolean().describe('false when this principal had already recovered that selection: the same recovery is returned') }).meta({ id: 'RecoveryView' })

const recover = v1Route({
  method: 'post',
  path: '/v1/selections/{id}/recover',
  summary: 'A new selection of exactly the ids an incomplete selection returned (filter id in […]): complete once its walk reads every one of them',
  request: { params: selectionParam },
  responses: {
    201: jsonResponse('the recovery selection, created now; recovery_of names the one it recovers', recoveryViewSchema),
    200: jsonResponse('the recovery this principal had already made (the same request is the same object)', recoveryViewSchema),
    ...errors([400, 401, 403, 404, 409, 502]),
  },
})

/** An export's end as a streamed answer's audit row keeps it: its outcome, the rows sent, the selection's completeness, the row of its start. */
function exportStreamEnd(selection: SelectionRecord, end: ExportEnd, startedSeq: number | null): StreamEnd {
  return {
    outcome: exportOutcome(end),
    items: end.rows_sent,
    envelope: { complete: selection.complete, incomplete_reasons: selection.completeness.incomplete_reasons },
    manifest: { ...end },
    started_seq: startedSeq,
  }
}

export function registerSelectionRoutes(app: OpenAPIHono<ApiEnv>, gateway: Gateway): void {
  app.openapi(create, async (c) => {
    const made = await gateway.selections.create(c.get('actor'), c.req.valid('param').resource, c.req.valid('json'), { idempotencyKey: idempotencyKeyOf(c) })
    return made.created ? c.json(made, 201) : c.json(made, 200)
  })

  app.openapi(show, async (c) => c.json(await gateway.selections.view(c.get('actor'), c.req.valid('param').id), 200))

  app.openapi(records, async (c) => {
    const { cursor, limit } = c.req.valid('query')
    return c.json(await gateway.selections.page(c.get('actor'), c.req.valid('param').id, { ...(cursor === undefined ? {} : { cursor }), limit }), 200)
  })

  app.openapi(excluded, async (c) => {
    const { rule, cursor, limit } = c.req.valid('query')
    return c.json(await gateway.selections.excluded(c.get('actor'), c.req.valid('param').id, { rule, ...(cursor === undefined ? {} : { cursor }), limit }), 200)
  })

  app.openapi(exportManifest, async (c) => {
    // the request's audit row is written when the stream ends, saying how far it got (a row written now would
    // call an export that is cut later a success); a refusal before the stream is recorded as any other. A start
    // row is written before the first byte: an export whose client holds it unread, or whose process dies, is
    // still in the log, and its end row names that start (`started_seq`)
    const recordEnd = c.get('record_stream_end')
    const actor = c.get('actor')
    const format = c.req.valid('query').format
    // HEAD (served by this GET route): the headers only. Run as the GET, it started an export nobody reads (a start
    // row, a stream held unread until its stall timeout, then logged as cut by a stalled client)
    if (c.req.method === 'HEAD') {
      const selection = await gateway.selections.view(actor, c.req.valid('param').id)
      return c.body(null, 200, manifestHeaders({ ...manifestFile(selection.selection_id, format), selection })) as never
    }
    let startedSeq: number | null = null
    const exported = await gateway.selections.exportStream(actor, c.req.valid('param').id, format, (end) => recordEnd?.(exportStreamEnd(exported.selection, end, startedSeq)) ?? Promise.resolve())
    c.set('streamed_answer', true)
    // recording never fails the request: a logging fault is logged, and the export goes on without its start row
    startedSeq = await gateway.audit
      .record({ actor, surface: 'http', action: EXPORT_STARTED_ACTION, selection_id: exported.selection.selection_id, summary: { ...exportStartedSummary(exported.selection, format), path: c.req.path } })
      .then((row) => row.seq)
      .catch((error: unknown) => {
        gateway.log.error({ err: error, path: c.req.path }, 'selection export: could not record its start')
        return null
      })
    return new Response(exported.stream, {
      status: 200,
      headers: manifestHeaders(exported),
    }) as never
  })

  app.openapi(recover, async (c) => {
    const recovery = await gateway.selections.recover(c.get('actor'), c.req.valid('param').id)
    return recovery.created ? c.json(recovery, 201) : c.json(recovery, 200)
  })
}
