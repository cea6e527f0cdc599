import { z } from 'zod'
import { filterSchema } from '../contract/index.js'

const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'a field name (letters, digits, _)')
const secretRef = z
  .union([z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) })])
  .describe('where the secret lives: an environment variable or a secret file; never the secret itself')

export const fieldTypeSchema = z.enum(['string', 'number', 'integer', 'boolean', 'tags', 'timestamp'])
export type FieldType = z.infer<typeof fieldTypeSchema>

const durationMs = z.number().int().positive()

const templateValue: z.ZodType<unknown> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(templateValue), z.record(z.string(), templateValue)]),
)

/** How a value is written into a query parameter: as text, as JSON (`"past_due"`, CouchDB keys), or a comma list. */
export const paramEncodingSchema = z.enum(['plain', 'json', 'comma'])
export type ParamEncoding = z.infer<typeof paramEncodingSchema>

/** A REST pagination style. */
export const paginationSchema = z.discriminatedUnion('style', [
  z.strictObject({
    style: z.literal('cursor'),
    param: z.string().default('cursor'),
    next_cursor_path: z.string().default('next_cursor'),
  }),
  z.strictObject({ style: z.literal('offset'), offset_param: z.string().default('offset') }),
  z.strictObject({ style: z.literal('page'), param: z.string().default('page'), first: z.number().int().default(1) }),
  z.strictObject({ style: z.literal('link_header') }),
  z.strictObject({ style: z.literal('next_link'), path: z.string().default('next') }),
  z
    .strictObject({
      style: z.literal('keyset'),
      field: fieldName.optional().describe("the declared field of the last item that starts the next page; default the id field"),
      param: z.string().min(1).default('start_after').describe('query parameter for the start key (or "{{cursor}}" in a POST body)'),
      encoding: z.enum(['plain', 'json']).default('plain').describe('json for CouchDB-style keys: startkey="abc"'),
      skip_param: z
        .string()
        .min(1)
        .optional()
        .describe('for an inclusive start key (startkey): sent as <skip_param>=1 so the last item is not read again'),
    })
    .describe('keyset paging from a field of the last item'),
])
export type PaginationConfig = z.infer<typeof paginationSchema>

/** A dotted path into JSON (`meta.total`, `doc.state`, `0.id`): segments of anything but dots, none empty. */
const dottedPath = z.string().regex(/^[^.]+(\.[^.]+)*$/, 'a dotted path such as "doc.state" (no empty segment)')

export const httpSourceSchema = z.strictObject({
  name: z.string().min(1),
  base_url: z.url(),
})

export const httpConnectorSchema = z.strictObject({
  kind: z.literal('http'),
  sources: z.array(httpSourceSchema).min(1).describe('one per shard, tenant or region; one failing source leaves the others'),
  credential: z
    .strictObject({
      header: z.string().default('Authorization'),
      scheme: z.string().optional().describe('e.g. "Bearer": the header value is "<scheme> <secret>"'),
      secret: secretRef,
    })
    .optional(),
  timeout_ms: durationMs.default(10_000),
  max_response_bytes: z.number().int().positive().default(10 * 1024 * 1024),
  read_concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(8)
    .describe('records read by id at once (a batch re-read before its writes, reconciliation); raise it with execution.concurrency'),
  list: z.strictObject({
    path: z.string().startsWith('/'),
    query: z.record(z.string(), z.string()).default({}).describe('fixed query parameters'),
    filter_params: z
      .record(fieldName, z.string())
      .default({})
      .describe('equality filters passed upstream as query parameters (field → parameter); the rest is checked here'),
    upstream_filters: z
      .array(
        z.strictObject({
          field: fieldName,
          op: z.enum(['eq', 'in', 'lt', 'lte', 'gt', 'gte', 'contains']).default('eq'),
          param: z.string().min(1).optional().describe('query parameter; omit when the POST body template carries "{{filter.FIELD.OP}}"'),
          encoding: paramEncodingSchema.default('plain').describe('comma: a list as a,b,c (for "in"); json: JSON-encoded'),
        }),
      )
      .default([])
      .describe('filter clauses the upstream can apply, per field and operator; every item is still re-checked here'),
    page_size_param: z.string().optional(),
    method: z.enum(['GET', 'POST']).default('GET').describe('POST for search endpoints that take the query in a JSON body'),
    body: templateValue
      .optional()
      .describe('for POST: the JSON body; whole-string placeholders "{{cursor}}", "{{page_size}}", "{{skip}}", "{{filter.FIELD.OP}}" (a key whose placeholder has no value is left out)'),
    pagination: paginationSchema,
    items_path: z.string().default('items').describe('dotted path to the array of items; "" for a bare array'),
    record_path: z
      .union([z.literal(''), dottedPath])
      .default('')
      .describe('dotted path to the record inside each item ("doc" for rows[].doc); "" when the item is the record'),
    has_more_path: z.string().optional(),
    total_path: z.string().optional(),
    total_header: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/, 'a header name')
      .optional()
      .describe('a response header carrying the total, e.g. X-Total-Count (instead of total_path)'),
    total_kind: z
      .enum(['filtered', 'collection'])
      .default('filtered')
      .describe('what the total at total_path counts: the matches of the query sent, or the whole collection'),
    failed_parts: z
      .strictObject({ path: z.string().min(1), total_path: z.string().min(1).optional() })
      .optional()
      .describe('a count of the parts (shards, partitions) that failed to answer, e.g. _shards.failed: above 0, the page is not the whole answer (SOURCE_UNAVAILABLE)'),
    incomplete_flag: z
      .strictObject({ path: z.string(), reason: z.enum(['TIME_BUDGET_EXCEEDED', 'RESULT_LIMIT_REACHED']) })
      .optional()
      .describe('an upstream flag like incomplete_results: true, and the reason it means'),
    cursor_expired: z
      .strictObject({ status: z.array(z.number().int()).default([410]), code_path: z.string().optional(), code: z.string().optional() })
      .default({ status: [410] }),
  }),
  get: z.strictObject({
    path: z.string().startsWith('/').describe('path template with {id}'),
    record_path: z.union([z.literal(''), dottedPath]).default('').describe('dotted path to the record inside the answer ("data"); "" for the body itself'),
    batch: z
      .strictObject({
        path: z.string().startsWith('/').describe('a list path that answers several ids at once (no placeholder)'),
        query: z.record(z.string(), z.string()).default({}).describe('fixed query parameters'),
        ids_param: z.string().min(1).describe('the query parameter that names the ids'),
        encoding: z.enum(['plain', 'comma']).default('comma').describe('comma: ids=a,b,c; plain: one parameter per id (id=a&id=b)'),
        max_ids: z.number().int().min(2).max(500).default(50).describe('ids per request'),
        items_path: z.string().default('items').describe('dotted path to the array of records; "" for a bare array'),
        record_path: z.union([z.literal(''), dottedPath]).default('').describe('dotted path to the record inside each item'),
      })
      .optional()
      .describe(
        'an optional read of several records by id in one request (GET /users?ids=a,b). Each item must be the whole record, as get.path answers it (`warrant check` compares them); an id the answer leaves out, or an answer that names an id not asked for, is read alone by get.path',
      ),
  }),
  field_paths: z
    .record(fieldName, dottedPath)
    .default({})
    .describe('declared field → dotted path inside the record ("owner.name"); default: the field name'),
  absent_means_null: z
    .array(fieldName)
    .default([])
    .describe('fields an upstream leaves out when they are null; any other declared field missing from a record makes it unjudgeable'),
  version: z.discriminatedUnion('from', [
    z.strictObject({ from: z.literal('etag') }),
    z.strictObject({ from: z.literal('field'), field: fieldName }),
  ]),
})
export type HttpConnectorConfig = z.infer<typeof httpConnectorSchema>

export const sqlConnectorSchema = z.strictObject({
  kind: z.literal('sql'),
  url: z.string().min(1).describe('sqlite:./file.db, postgres://… or mysql://…'),
  table: fieldName,
  source: z.string().default('primary').describe('the name this table is reported under'),
  password: secretRef.optional().describe('for postgres or mysql URLs without a password'),
  write_window: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe(
      'targets one conditional UPDATE writes at once (SQLite, PostgreSQL; default: execution.concurrency). The executor writes one window at a time: this many targets are in flight, and a stop rule sees a whole window before it halts',
    ),
})
  .superRefine((c, ctx) => {
    // MySQL has no UPDATE … RETURNING: it writes one target at a time, so a window there would be a promise not kept
    if (c.write_window !== undefined && /^\s*(mysql|mariadb):/i.test(c.url))
      ctx.addIssue({ code: 'custom', path: ['write_window'], message: 'a mysql upstream is written one target at a time (no UPDATE … RETURNING); remove write_window' })
  })
export type SqlConnectorConfig = z.infer<typeof sqlConnectorSchema>

export const connectorSchema = z.discriminatedUnion('kind', [sqlConnectorSchema, httpConnectorSchema])
export type ConnectorConfig = z.infer<typeof connectorSchema>

/** Where a conditional write sends the version it was read at. */
export const versionPlacementSchema = z.discriminatedUnion('in', [
  z.strictObject({ in: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]+$/, 'a header name').default('If-Match') }),
  z.strictObject({ in: z.literal('body'), path: z.string().min(1).describe('dotted path in the body, e.g. _rev') }),
  z.strictObject({ in: z.literal('query'), param: z.string().min(1).describe('e.g. rev') }),
  z.strictObject({ in: z.literal('none') }),
])
export type VersionPlacement = z.infer<typeof versionPlacementSchema>

export const WRITE_STYLES = ['patch', 'replace', 'action'] as const
export type WriteStyle = (typeof WRITE_STYLES)[number]
const DEFAULT_METHOD = { patch: 'PATCH', replace: 'PUT', action: 'POST' } as const

/**
 * How an action reaches an http upstream. `patch` sends a body of the set fields; `replace` re-reads the
 * whole representation just before the write and sends it back with the set fields applied (read-modify-write,
 * for upstreams with no partial update); `action` calls an endpoint that does the change itself
 * (`POST /items/{id}/pause`). Whatever the style, the whole record is checked after the write.
 */
export const writeSchema = z
  .strictObject({
    style: z.enum(WRITE_STYLES).default('patch'),
    method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']).optional().describe('default: PATCH (patch), PUT (replace), POST (action)'),
    path: z.string().startsWith('/').describe('path template: {id} and {params.NAME}'),
    body: templateValue.optional().describe('body template: "{{set.FIELD}}", "{{params.NAME}}", "{{id}}"; not for style replace'),
    if_match: z.boolean().optional().describe('shorthand: true (the default) is version {in: header, name: If-Match}, false is {in: none}'),
    version: versionPlacementSchema.optional().describe('where the version read is sent: a header, a body field (CouchDB _rev) or a query parameter'),
    new_version: z
      .discriminatedUnion('from', [
        z.strictObject({ from: z.literal('body'), path: z.string().min(1) }),
        z.strictObject({ from: z.literal('header'), name: z.string().min(1) }),
      ])
      .optional()
      .describe('where the write answer carries the new version (e.g. body path "rev", or header ETag)'),
    may_change: z
      .array(z.string().min(1))
      .default([])
      .describe('dotted paths the upstream itself changes on every write (e.g. updated_at); any other field outside the set that changes fails the target'),
    put_merges: z.boolean().default(false).describe("true only if this upstream's PUT updates just the fields sent (a partial update)"),
  })
  .superRefine((w, ctx) => {
    const refuse = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message })
    const method = w.method ?? DEFAULT_METHOD[w.style]
    const noVersion = w.version?.in === 'none' || (w.version === undefined && w.if_match === false)
    if (w.version !== undefined && w.if_match !== undefined && w.if_match !== (w.version.in === 'header'))
      refuse('if_match', 'if_match and version disagree; give only version')
    if (w.style === 'patch' && method === 'PUT' && !w.put_merges)
      refuse(
        'method',
        'a PUT replaces the whole representation on most APIs: a body of only the set fields would erase every other field of each record. ' +
          "Fix: style: replace (Warrant re-reads each record and sends it whole with the set fields applied), or method: PATCH, or put_merges: true if this upstream's PUT really updates only the fields sent",
      )
    if (w.style === 'patch' && method === 'DELETE')
      refuse('method', 'a DELETE removes the record, which no action that sets fields can verify; for an endpoint that changes state use style: action')
    if (w.style === 'replace') {
      if (w.body !== undefined)
        refuse('body', 'a replacing write sends the whole representation as re-read just before the write, with the set fields applied; remove write.body')
      if (method === 'DELETE') refuse('method', 'a replacing write is a PUT (or POST) of the whole representation, not a DELETE')
      if (noVersion)
        refuse(
          'version',
          'a replacing write without its version would overwrite any change made between the re-read and the write; ' +
            'set write.version: {in: header, name: If-Match}, {in: body, path: _rev} or {in: query, param: rev}',
        )
    }
    if (w.version?.in === 'body' && w.style !== 'replace' && (w.body === null || typeof w.body !== 'object' || Array.isArray(w.body)))
      refuse('version', 'the version goes in a body field, so write.body must be a JSON object template')
  })
  .transform((w) => ({ ...w, method: w.method ?? DEFAULT_METHOD[w.style] }))
export type WriteConfig = z.infer<typeof writeSchema>

/** Where a write sends the version: `version` when given, else what `if_match` says (If-Match by default). */
export function versionPlacementOf(write: Pick<WriteConfig, 'version' | 'if_match'>): VersionPlacement {
  return write.version ?? (write.if_match === false ? { in: 'none' } : { in: 'header', name: 'If-Match' })
}

/** A declared action: what it sets, when it may run, how it writes, what the upstream must answer. */
export const actionSchema = z.strictObject({
  description: z.string().default(''),
  params: z
    .record(fieldName, z.strictObject({ type: z.enum(['string', 'number', 'boolean']), required: z.boolean().default(true), description: z.string().optional() }))
    .default({}),
  set: z
    .record(fieldName, templateValue)
    .refine((s) => Object.keys(s).length > 0, 'an action sets at least one field')
    .describe('field → absolute value, or "{{params.NAME}}"'),
  precondition: filterSchema.default({}).describe('must still hold at write time, else the target is skipped'),
  write: writeSchema.optional().describe('for http connectors; sql connectors update by id and version'),
  expect: z
    .strictObject({
      status: z.array(z.number().int()).default([200, 201, 204]),
      fields: z.record(fieldName, templateValue).optional().describe('response fields that must hold; default: every field set'),
    })
    .default({ status: [200, 201, 204] }),
  reversible: z.boolean().default(true),
})
export type ActionConfig = z.infer<typeof actionSchema>

export const standingApprovalSchema = z.strictObject({
  name: z.string().min(1),
  selector: filterSchema,
  exclude: z
    .array(z.strictObject({ rule: z.string().min(1), filter: filterSchema }))
    .default([])
    .describe('exclusion rules a matching selection must carry exactly (same rules, same order); default none'),
  action: z.string().min(1),
  max_count: z.number().int().positive(),
  flagged: filterSchema.optional().describe('a member matching this always needs review (e.g. tags contains enterprise)'),
})

export const resourceSchema = z.strictObject({
  description: z.string().default(''),
  environment: z.strictObject({
    name: z.string().min(1).describe('e.g. billing-prod'),
    host: z.string().optional(),
    account: z.string().optional(),
  }),
  connector: connectorSchema,
  fields: z.record(fieldName, fieldTypeSchema).describe('every field the upstream has, with its type'),
  id_field: fieldName.default('id'),
  version_field: fieldName.optional().describe('sql: the version column; http: see connector.version'),
  review_fields: z.array(fieldName).min(1),
  denied_fields: z.array(fieldName).default([]).describe('secrets, tokens, free text: never leave the gateway'),
  group_by: z.array(fieldName).default([]),
  visibility: z
    .strictObject({
      description: z.string(),
      restricted: z.boolean().describe('true when the credential sees only part of the scope'),
    })
    .default({ description: 'all records of the source', restricted: false }),
  selection_ttl_minutes: z.number().positive().optional(),
  approval: z
    .strictObject({
      ttl_minutes: z.number().positive().default(15),
      two_reviewers_above: z.number().int().nonnegative().optional().describe('more targets than this need two distinct reviewers'),
    })
    .default({ ttl_minutes: 15 }),
  standing_approvals: z.array(standingApprovalSchema).default([]),
  actions: z.record(fieldName, actionSchema).default({}),
})
export type ResourceConfig = z.infer<typeof resourceSchema>

/** What a reviewer is told about, outbound: a plan awaits review, a plan was decided, an operation ended. */
export const NOTIFICATION_EVENTS = ['plan.awaiting_review', 'plan.decided', 'operation.finished', 'operation.halted'] as const
export type NotificationEventKind = (typeof NOTIFICATION_EVENTS)[number]

/** One outbound webhook: JSON POST, body signed with HMAC-SHA256 (`X-Warrant-Signature`), retried with backoff. */
export const webhookSchema = z
  .strictObject({
    name: z.string().min(1).max(100).optional().describe('shown on the review pages instead of the host'),
    url: z
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'an http or https URL')
      .describe('where the POST goes; a Slack incoming-webhook URL with format "slack"'),
    secret: secretRef.optional().describe('HMAC-SHA256 key for X-Warrant-Signature; required for format json'),
    format: z.enum(['json', 'slack']).default('json'),
    events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).optional().describe('default: every event'),
  })
  .refine((w) => w.format === 'slack' || w.secret !== undefined, { message: 'a json webhook needs a secret to sign its body', path: ['secret'] })

export const notificationsSchema = z
  .strictObject({
    webhooks: z.array(webhookSchema).max(20).default([]),
    retry: z
      .strictObject({
        max_attempts: z.number().int().min(1).max(20).default(6),
        initial_backoff_ms: z.number().int().min(10).max(600_000).default(1000),
        max_backoff_ms: z.number().int().min(10).max(3_600_000).default(60_000),
      })
      .default({ max_attempts: 6, initial_backoff_ms: 1000, max_backoff_ms: 60_000 }),
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  })
  .default({ webhooks: [], retry: { max_attempts: 6, initial_backoff_ms: 1000, max_backoff_ms: 60_000 }, timeout_ms: 10_000 })
export type NotificationsConfig = z.infer<typeof notificationsSchema>
export type WebhookConfig = z.infer<typeof webhookSchema>

export const configSchema = z.strictObject({
  store: z.string().default('sqlite:./.warrant/warrant.db'),
  server: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8787),
      public_url: z.url().optional(),
      metrics_port: z
        .number()
        .int()
        .min(0)
        .max(65535)
        .optional()
        .describe('serve GET /metrics without a token on this port too (on the API port it needs an admin token)'),
      metrics_host: z.string().default('127.0.0.1').describe('where metrics_port listens: loopback unless Prometheus is elsewhere'),
      max_body_bytes: z.number().int().min(1024).max(1024 * 1024 * 1024).optional().describe('largest request body accepted; default 4 MiB (413 payload_too_large above it)'),
      allowed_origins: z.array(z.string().min(1)).max(100).optional().describe('browser origins allowed to call /mcp besides the server itself and public_url'),
    })
    .default({ host: '127.0.0.1', port: 8787, metrics_host: '127.0.0.1' }),
  selection_ttl_minutes: z.number().positive().default(30),
  execution: z
    .strictObject({
      concurrency: z.number().int().min(1).max(64).default(4),
      max_writes_per_second: z.number().positive().optional(),
      halt_after_consecutive_errors: z.number().int().positive().default(5),
      halt_after_validation_failures: z.number().int().positive().default(10),
      batch_size: z.number().int().positive().default(50),
      lease_seconds: z.number().positive().default(30).describe('how long an executor holds an operation without renewing its lease'),
      reconcile_settle_seconds: z
        .number()
        .min(0)
        .max(86_400)
        .default(300)
        .describe(
          'how long after the gateway stopped waiting for a write (a timeout, a lost answer, a crash) an upstream may still apply it: until then reconcile never concludes "not applied" from a record still at its version',
        ),
    })
    .default({ concurrency: 4, halt_after_consecutive_errors: 5, halt_after_validation_failures: 10, batch_size: 50, lease_seconds: 30, reconcile_settle_seconds: 300 }),
  resources: z.record(fieldName, resourceSchema),
  notifications: notificationsSchema.describe('outbound webhooks for reviewers; default none'),
  audit: z
    .strictObject({
      key: z
        .union([
          z.strictObject({ env: z.string().min(1) }),
          z.strictObject({ file: z.string().min(1), create: z.boolean().optional().describe('write a new random key file when none exists') }),
        ])
        .optional()
        .describe('the HMAC key(s) the audit chain is signed with, kept outside the store: lines "KEY_ID SECRET", the first signs; default WARRANT_AUDIT_KEY, else unsigned'),
    })
    .optional(),
})
export type WarrantConfig = z.infer<typeof configSchema>
