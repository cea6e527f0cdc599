import { z } from 'zod'
import { filterSchema } from '../contract/index.js'
import { connectorSchema } from './connector-schema.js'
import { refusePlainHttp } from './plain-http.js'
import { refuseUnencryptedDatabase } from './unencrypted-database.js'
import { fieldName, fieldTypeSchema, secretRef, templateValue, ttlMinutes } from './value-schemas.js'

export {
  connectorSchema,
  httpConnectorSchema,
  httpSourceSchema,
  paginationSchema,
  paramEncodingSchema,
  sqlConnectorSchema,
  type ConnectorConfig,
  type HttpConnectorConfig,
  type PaginationConfig,
  type ParamEncoding,
  type SqlConnectorConfig,
} from './connector-schema.js'
export { fieldTypeSchema, type FieldType } from './value-schemas.js'

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
      // a 4xx or 5xx is a refusal or a failure before this list is read: only a success status is checked against it,
      // so a list without one made every write "unexpected", the operation halting after its first write landed
      status: z
        .array(z.number().int().min(200, 'a success status (200-299): a refused or failed write never counts as done').max(299, 'a success status (200-299): a refused or failed write never counts as done'))
        .min(1, 'at least one success status (200-299), e.g. [200, 204]')
        .default([200, 201, 204]),
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
    name: z.string().regex(/\S/, 'a name a reviewer can read, e.g. billing-prod (not empty, not only whitespace)').describe('e.g. billing-prod'),
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
  selection_ttl_minutes: ttlMinutes.optional(),
  approval: z
    .strictObject({
      ttl_minutes: ttlMinutes.default(15),
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
      // fetch refuses such a URL and quotes it whole in its error, which every failed delivery kept
      .refine((u) => !URL.canParse(u) || new URL(u).username + new URL(u).password === '', 'must not contain credentials (user:password@): no request can carry them; a json webhook is authenticated by its signature (secret)')
      .describe('where the POST goes; a Slack incoming-webhook URL with format "slack"'),
    secret: secretRef.optional().describe('HMAC-SHA256 key for X-Warrant-Signature; required for format json'),
    format: z.enum(['json', 'slack']).default('json'),
    events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).optional().describe('default: every event'),
    plain_http: z.boolean().optional().describe('allow an http:// url off this machine (the network between is your own); loopback and https need no flag'),
  })
  .refine((w) => w.format === 'slack' || w.secret !== undefined, { message: 'a json webhook needs a secret to sign its body', path: ['secret'] })
  .superRefine((w, ctx) => refusePlainHttp(w.url, w.plain_http === true, ['url'], ctx, 'webhook'))

export const notificationsSchema = z
  .strictObject({
    webhooks: z.array(webhookSchema).max(20).default([]),
    retry: z
      .strictObject({
        max_attempts: z.number().int().min(1).max(20).default(6),
        initial_backoff_ms: z.number().int().min(10).max(600_000).default(1000),
        max_backoff_ms: z.number().int().min(10).max(3_600_000).default(60_000),
      })
      // the wait is min(max, initial × 2^n): an initial above the max made every wait the max, the spacing written unused
      .refine((r) => r.initial_backoff_ms <= r.max_backoff_ms, {
        path: ['initial_backoff_ms'],
        error: (issue) => {
          const r = issue.input as { initial_backoff_ms: number; max_backoff_ms: number }
          return `${r.initial_backoff_ms} is above max_backoff_ms (${r.max_backoff_ms}): every retry would wait max_backoff_ms; swap them, or raise max_backoff_ms`
        },
      })
      .default({ max_attempts: 6, initial_backoff_ms: 1000, max_backoff_ms: 60_000 }),
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  })
  .default({ webhooks: [], retry: { max_attempts: 6, initial_backoff_ms: 1000, max_backoff_ms: 60_000 }, timeout_ms: 10_000 })
export type NotificationsConfig = z.infer<typeof notificationsSchema>
export type WebhookConfig = z.infer<typeof webhookSchema>

/** The longest a SQLite store statement waits for another connection's lock (on timers; this process's other store work queues behind it). */
export const MAX_SQLITE_BUSY_TIMEOUT_MS = 30_000

/** The longest a PostgreSQL store connection may take to open, or a request wait for a free one. */
export const MAX_POSTGRES_CONNECT_TIMEOUT_MS = 300_000

/** The bounds of a PostgreSQL store statement's time limit: long enough for any store statement, short of never. */
export const MIN_POSTGRES_STATEMENT_TIMEOUT_MS = 1_000
export const MAX_POSTGRES_STATEMENT_TIMEOUT_MS = 3_600_000

/**
 * `store: URL`, or `store: { url, busy_timeout_ms | connect_timeout_ms | statement_timeout_ms }`; either is read as the object. `busy_timeout_ms` is how long
 * a SQLite store statement waits for another connection's lock (a CLI command, a backup) before it is refused as
 * busy; the store waits on timers, /health and the event loop served meanwhile. `connect_timeout_ms` bounds a
 * PostgreSQL store's connection (a firewall that drops packets, a proxy that accepts and never answers): without
 * it `warrant serve` waited at start, silent, for as long as the kernel kept trying. `statement_timeout_ms` bounds
 * waiting for a PostgreSQL store's answer to one statement (a server or proxy that falls silent mid-query held the
 * request forever); its default is generous, since removing or renumbering a million members is one statement.
 */
const storeSchema = z
  .preprocess(
    (value) => (typeof value === 'string' ? { url: value } : value),
    z
      .strictObject({
        url: z.string().describe('sqlite:./file.db, sqlite::memory: or postgres://user@host:5432/db (off this machine, with ?sslmode=verify-full)'),
        unencrypted: z
          .boolean()
          .optional()
          .describe('PostgreSQL only: allow a store URL off this machine that asks for no TLS (the network between is your own); loopback, unix sockets and sslmode=require or stronger need no flag'),
        busy_timeout_ms: z
          .number()
          .int()
          .min(0)
          .max(MAX_SQLITE_BUSY_TIMEOUT_MS)
          .optional()
          .describe('SQLite only: how long a statement waits for another connection\'s lock before it is refused (503 store_unavailable, busy); default 5000'),
        connect_timeout_ms: z
          .number()
          .int()
          .min(1)
          .max(MAX_POSTGRES_CONNECT_TIMEOUT_MS)
          .optional()
          .describe('PostgreSQL only: how long opening a connection (or waiting for a free one in the pool) may take before the store is refused (503 store_unavailable); default 10000'),
        statement_timeout_ms: z
          .number()
          .int()
          .min(MIN_POSTGRES_STATEMENT_TIMEOUT_MS)
          .max(MAX_POSTGRES_STATEMENT_TIMEOUT_MS)
          .optional()
          .describe('PostgreSQL only: how long the gateway waits for the answer to one store statement before the store is refused (503 store_unavailable) and that connection dropped; default 300000'),
      })
      .superRefine((store, ctx) => {
        if (store.busy_timeout_ms !== undefined && !store.url.startsWith('sqlite:'))
          ctx.addIssue({ code: 'custom', path: ['busy_timeout_ms'], message: 'applies to a sqlite: store only; a PostgreSQL store waits for no file lock (remove the key)' })
        if (store.connect_timeout_ms !== undefined && store.url.startsWith('sqlite:'))
          ctx.addIssue({ code: 'custom', path: ['connect_timeout_ms'], message: 'applies to a PostgreSQL store only; a sqlite: store opens a file (remove the key)' })
        if (store.statement_timeout_ms !== undefined && store.url.startsWith('sqlite:'))
          ctx.addIssue({ code: 'custom', path: ['statement_timeout_ms'], message: 'applies to a PostgreSQL store only; a sqlite: store waits on no server (remove the key)' })
        if (store.unencrypted !== undefined && store.url.startsWith('sqlite:'))
          ctx.addIssue({ code: 'custom', path: ['unencrypted'], message: 'applies to a PostgreSQL store only; a sqlite: store is a file and crosses no network (remove the key)' })
        refuseUnencryptedDatabase(store.url, store.unencrypted === true, ['url'], ctx, 'store')
      }),
  )
  .default({ url: 'sqlite:./.warrant/warrant.db' })
export type StoreConfig = z.infer<typeof storeSchema>

/** How long a streamed answer (an export, a search) waits for a client that reads nothing of it: whole ms, 100 ms to an hour. */
const stallTimeoutMs = (description: string) => z.number().int().min(100).max(3_600_000).optional().describe(description)

export const configSchema = z.strictObject({
  store: storeSchema,
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
      export_stall_timeout_ms: stallTimeoutMs(
        'how long a selection export waits for a client that reads nothing of it before cutting it (default 60000): its audit row says stopped client_stalled, and what it held (the socket, the page it was sending) is let go',
      ),
      stream_stall_timeout_ms: stallTimeoutMs(
        "how long a streamed search answer waits for a client that reads nothing of it before cutting it (default 60000): its audit row says outcome failed, stopped client_stalled; the walk ends, and what it held (its upstream read transaction or snapshot, the socket, the queued items) is let go. The walk's own deadline_ms ends it earlier: past it the walk no longer waits for its client",
      ),
    })
    .default({ host: '127.0.0.1', port: 8787, metrics_host: '127.0.0.1' }),
  selection_ttl_minutes: ttlMinutes.default(30),
  retention: z
    .strictObject({
      prune_members_after_days: z
        .number({ error: 'must be a whole number of days, 1 to 36500' })
        .int('must be a whole number of days, 1 to 36500')
        .min(1, 'at least 1 day: members are pruned only from selections expired that long')
        .max(36_500, 'at most 36500 days (100 years)')
        .default(30)
        .describe('`warrant store prune` deletes the members (and excluded records) of selections expired at least this many days, unless a plan on them was approved, committed or ran: those are evidence, kept forever. The selection row (count, digest) is always kept'),
      sweep_interval_minutes: z
        .number({ error: 'must be a whole number of minutes, 1 to 10080' })
        .int('must be a whole number of minutes, 1 to 10080')
        .min(1, 'at least 1 minute')
        .max(10_080, 'at most 10080 minutes (a week)')
        .optional()
        .describe('when set, `warrant serve` (and `warrant mcp`) also run that sweep themselves: at start, then every this many minutes, pruning at prune_members_after_days. Unset (the default), nothing is pruned unless `warrant store prune` is run: deleting stored rows is never a surprise of an upgrade'),
    })
    .default({ prune_members_after_days: 30 }),
  execution: z
    .strictObject({
      concurrency: z.number().int().min(1).max(64).default(4),
      max_writes_per_second: z.number().positive().optional(),
      halt_after_consecutive_errors: z.number().int().positive().default(5),
      halt_after_validation_failures: z.number().int().positive().default(10),
      batch_size: z.number().int().positive().default(50),
      max_retry_after_seconds: z
        .number()
        .int()
        .min(0)
        .max(86_400)
        .default(300)
        .describe(
          'the longest pause an upstream\'s Retry-After (429) may impose on an operation: one asking for longer halts it (retry_after_too_long), its target pending, rather than leave it running unseen for a day; also the longest wait a walk (search, selection) names after a 429 or 503: its own backoff stays under it, and a source asking for longer ends SOURCE_UNAVAILABLE',
        ),
      lease_seconds: z
        .number()
        .min(0.2, 'at least 0.2: a lease is renewed every third of it, and never more often than every 50 ms, so a shorter one runs out before it is renewed and another executor takes the operation over mid-write')
        .max(3600, 'at most 3600 (an hour): a crashed executor holds its operation that long')
        .default(30).describe('how long an executor holds an operation without renewing its lease'),
      reconcile_settle_seconds: z
        .number()
        .min(0)
        .max(86_400)
        .default(300)
        .describe(
          'how long after the gateway stopped waiting for a write (a timeout, a lost answer, a crash) an upstream may still apply it: until then reconcile never concludes "not applied" from a record still at its version',
        ),
    })
    .default({ concurrency: 4, halt_after_consecutive_errors: 5, halt_after_validation_failures: 10, batch_size: 50, max_retry_after_seconds: 300, lease_seconds: 30, reconcile_settle_seconds: 300 }),
  resources: z.record(fieldName, resourceSchema),
  notifications: notificationsSchema.describe('outbound webhooks for reviewers; default none'),
  audit: z
    .strictObject({
      key: z
        .union([
          z.strictObject({ env: z.string().min(1) }),
          z.strictObject({ file: z.string().min(1), create: z.boolean().optional().describe('write a new random key file when none exists') }),
        ], { error: 'write where the key lives, { env: NAME } or { file: PATH, create: true }, never the key itself' })
        .optional()
        .describe('the HMAC key(s) the audit chain is signed with, kept outside the store: lines "KEY_ID SECRET", the first signs; default WARRANT_AUDIT_KEY, else unsigned'),
    })
    .optional(),
})
export type WarrantConfig = z.infer<typeof configSchema>
