import type { OpenAPIHono } from '@hono/zod-openapi'
import { z } from 'zod'
import { CHAIN_PROBLEMS, type AuditLog } from '../../audit/index.js'
import { WarrantError, queryInteger, type Actor } from '../../contract/index.js'
import type { ApiEnv } from '../authenticate.js'
import { errors, jsonResponse, v1Route } from './v1-route.js'

export interface AuditRouteDeps {
  readonly audit: AuditLog
}


const idParam = z.string().min(1).max(200)
// Stored timestamps are toISOString() UTC and compared as text: an instant outside years 0000..9999 in UTC has no
// such spelling (`+010000-…` sorts before `2025-…`), so it is refused rather than compared wrongly.
const instant = z.iso
  .datetime({ offset: true })
  // zod runs a refinement after a failed format too: a value that is no date is left to that failure
  .refine((value) => Number.isNaN(Date.parse(value)) || /^\d{4}-/.test(new Date(value).toISOString()), 'the instant falls outside years 0000..9999 in UTC')

// strict: an unknown parameter (`operation=`) would be dropped and the whole log answered as if filtered
export const auditQuerySchema = z.strictObject({
  operation_id: idParam.optional(),
  plan_id: idParam.optional(),
  selection_id: idParam.optional(),
  principal: idParam.optional().describe('principal id'),
  level: z.enum(['run', 'call']).optional().describe('run: who asked and who approved; call: each upstream call'),
  since: instant.optional().describe('ISO timestamp; events at or after it'),
  until: instant.optional().describe('ISO timestamp; events before it'),
  cursor: z.string().regex(/^\d{1,15}$/, 'a cursor is the next_cursor of a previous page').optional(),
  limit: queryInteger({ min: 1, max: 1000 }).optional().describe('events per page, 1..1000; default 100'),
  without_reads: z
    .enum(['true', 'false'], { error: 'without_reads is true or false' })
    .optional()
    .describe('true: leave out successful reads (GET/HEAD and read-only tools and commands; a refused read is always listed), counted in reads_left_out'),
})
  // `at >= since and at < until` matches nothing when since is not before until: an empty last page would read as
  // "no events in that range", so such a range is refused (instants compared, whatever their offsets)
  .refine((q) => q.since === undefined || q.until === undefined || !(Date.parse(q.since) >= Date.parse(q.until)), {
    message: 'since must be before until (events at or after since and before until): this range holds no instant',
    path: ['until'],
  })

export const auditEventSchema = z
  .object({
    seq: z.number().int(),
    level: z.enum(['run', 'call']),
    at: z.string(),
    principal: z.string().nullable(),
    surface: z.string(),
    action: z.string().describe('tool or endpoint (run level); method and endpoint template (call level)'),
    summary: z.unknown(),
    selection_id: z.string().nullable(),
    plan_id: z.string().nullable(),
    operation_id: z.string().nullable(),
    target_id: z.string().nullable(),
    details: z.unknown(),
    prev_hash: z.string(),
    hash: z.string(),
  })
  .meta({ id: 'AuditEvent' })

export const auditPageSchema = z.object({
  events: z.array(
    auditEventSchema.extend({
      refused_claim: z.boolean().describe("the request was refused: the row's plan, selection and operation ids are the ones it named, a claim, never that id's event"),
    }),
  ),
  next_cursor: z.number().int().nullable().describe('pass as `cursor` for the next page; null on the last page'),
  reads_left_out: z
    .object({
      count: z.number().int().describe('successful reads matching the filter left out within this page\'s span'),
      after_seq: z.number().int().nullable().describe('the span: rows with after_seq < seq < before_seq; null for an open end'),
      before_seq: z.number().int().nullable(),
    })
    .optional()
    .describe('with without_reads=true only: what this page left out, counted exactly in its span'),
  verified: z.literal(false).describe('always false: the rows are listed as stored; GET /v1/audit/verify checks the chain'),
  verification: z.string().describe('what the listing did not check, and where to check it'),
})

const chainHeadSchema = z.object({ seq: z.number().int(), hash: z.string(), key_id: z.string().optional(), mac: z.string().optional() })

export const acknowledgedBreakSchema = z
  .object({
    seq: z.number().int().describe('the first bad seq verify reported'),
    problem: z.enum(CHAIN_PROBLEMS),
    message: z.string().describe('what verify said of it'),
    stored_hash: z.string().nullable().describe('the hash stored on the row at seq when acknowledged; null: no row was there'),
    row_digest: z.string().nullable().describe('sha256 of that row as stored: changed again since, it is a new break'),
    prev_seq_found: z.number().int().nullable().describe('the row stored before it, as found: an acknowledged gap is that gap, never a wider one'),
    head_found: chainHeadSchema.nullable().describe('the chain head as found (null: missing, or stored but unreadable: see head_unreadable)'),
    head_unreadable: z.string().optional().describe('the text stored as the chain head when it did not read as one (head_found is then null); absent when the head was missing or read'),
    last_found: z.object({ seq: z.number().int(), hash: z.string() }).nullable(),
    reason: z.string(),
    acknowledged_at_seq: z.number().int().describe('the signed acknowledgement row'),
    at: z.string(),
    principal: z.string().nullable(),
    by: z.string().nullable(),
  })
  .meta({ id: 'AuditAcknowledgedBreak' })

const intactChain = {
  rows: z.number().int(),
  last_seq: z.number().int().nullable(),
  last_hash: z.string().nullable(),
  guarantee: z.enum(['signed', 'partly_signed', 'unsigned']).describe('signed: every row carries an HMAC of a key kept outside the store; unsigned: only accidental or partial tampering is detected'),
  signed_from_seq: z.number().int().nullable(),
  key_ids: z.array(z.string()),
  checkpoint: z.object({ seq: z.number().int(), hash: z.string() }).nullable(),
  statement: z.string().describe('what this result proves and what it does not'),
}

export const verifyResultSchema = z
  .discriminatedUnion('status', [
    z.object({ ok: z.literal(true), status: z.literal('ok'), acknowledged_breaks: z.array(acknowledgedBreakSchema).describe('always empty'), ...intactChain }),
    z.object({
      ok: z.literal(false),
      status: z.literal('ok_with_acknowledged_breaks').describe('every row verifies but the breaks an operator acknowledged: never `ok` again for this store'),
      acknowledged_breaks: z.array(acknowledgedBreakSchema),
      ...intactChain,
    }),
    z.object({
      ok: z.literal(false),
      status: z.literal('broken'),
      first_bad_seq: z.number().int(),
      problem: z.enum(CHAIN_PROBLEMS),
      message: z.string(),
      rows_checked: z.number().int(),
      acknowledged_breaks: z.array(acknowledgedBreakSchema).describe('acknowledged breaks the walk passed before the first bad row'),
    }),
  ])
  .meta({ id: 'AuditVerifyResult' })

const listEvents = v1Route({
  method: 'get',
  path: '/v1/audit',
  summary: 'Audit events in seq order, filtered and paged (reviewers and admins)',
  request: { query: auditQuerySchema },
  responses: {
    200: jsonResponse('a page of events', auditPageSchema),
    ...errors([400, 401, 403]),
  },
})

const verifyChain = v1Route({
  method: 'get',
  path: '/v1/audit/verify',
  summary: 'Recompute the hash chain; names the first bad row (reviewers and admins)',
  responses: {
    200: jsonResponse('the chain verifies, or the first bad row and what is wrong with it', verifyResultSchema),
    ...errors([401, 403]),
  },
})

/** The audit trail is for the people who answer for changes: reviewers and admins, never agents. */
function requireReviewer(actor: Actor): void {
  if (actor.role !== 'reviewer' && actor.role !== 'admin')
    throw new WarrantError('forbidden', `the audit log is readable by reviewers and admins; this token is an ${actor.role}'s`, { role: actor.role })
}

export function registerAuditRoutes(app: OpenAPIHono<ApiEnv>, deps: AuditRouteDeps): void {
  app.openapi(listEvents, async (c) => {
    requireReviewer(c.get('actor'))
    const q = c.req.valid('query')
    const page = await deps.audit.query({
      ...(q.operation_id === undefined ? {} : { operation_id: q.operation_id }),
      ...(q.plan_id === undefined ? {} : { plan_id: q.plan_id }),
      ...(q.selection_id === undefined ? {} : { selection_id: q.selection_id }),
      ...(q.principal === undefined ? {} : { principal: q.principal }),
      ...(q.level === undefined ? {} : { level: q.level }),
      // stored timestamps are toISOString() UTC; compare in that form
      ...(q.since === undefined ? {} : { since: new Date(q.since).toISOString() }),
      ...(q.until === undefined ? {} : { until: new Date(q.until).toISOString() }),
      ...(q.cursor === undefined ? {} : { after_seq: Number(q.cursor) }),
      ...(q.limit === undefined ? {} : { limit: q.limit }),
      ...(q.without_reads === 'true' ? { without_reads: true } : {}),
    })
    return c.json(page, 200)
  })

  app.openapi(verifyChain, async (c) => {
    requireReviewer(c.get('actor'))
    return c.json(await deps.audit.verify(), 200)
  })
}
