import { z } from 'zod'
import { refusePlainHttp } from './plain-http.js'
import { refuseUnencryptedDatabase } from './unencrypted-database.js'
import { dottedPath, durationMs, fieldName, secretRef, templateValue } from './value-schemas.js'

// How the gateway reaches an upstream: a table (sql) or a REST API (http).

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

export const httpSourceSchema = z
  .strictObject({
    name: z.string().min(1),
    base_url: z.url(),
    plain_http: z.boolean().optional().describe('allow an http:// base_url off this machine (the network between is your own); loopback and https need no flag'),
  })
  .superRefine((s, ctx) => refusePlainHttp(s.base_url, s.plain_http === true, ['base_url'], ctx, 'source'))

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
    max_page_size: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "the most records the upstream answers per page, whatever is asked (GitHub, Stripe: 100): a page of that length is full, so a full page without the next cursor or link at the configured path is refused, never taken for the end; pages ask for no more",
      ),
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
    notice_members: z
      .array(z.string().regex(/^[^.]+$/, 'a top-level member name, no dots'))
      .default([])
      .describe(
        'top-level members of a list answer that the upstream fills beside complete data (Twitter v2 puts "errors" beside its data when an expansion is gone): never read as the request failing. Without it, a non-empty errors or error, ok or success false, status "error"/"fail" or 400-599 makes the page not the list',
      ),
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

/**
 * The bounds of a sql upstream's statement time limit: whole seconds on MySQL/MariaDB (innodb_lock_wait_timeout), so
 * at least one; short of never (0 is "no limit" to PostgreSQL and MariaDB); on SQLite a statement waiting
 * for the lock holds the resource's one connection (waited on timers: the event loop is free), its reads by id and writes queued behind.
 */
export const MIN_SQL_STATEMENT_TIMEOUT_MS = 1_000
export const MAX_SQL_STATEMENT_TIMEOUT_MS = 3_600_000
export const MAX_SQLITE_STATEMENT_TIMEOUT_MS = 30_000

export const sqlConnectorSchema = z.strictObject({
  kind: z.literal('sql'),
  url: z.string().min(1).describe('sqlite:./file.db, postgres://… or mysql://…; off this machine, with TLS asked (?sslmode=verify-full, ?ssl-mode=VERIFY_IDENTITY)'),
  unencrypted: z
    .boolean()
    .optional()
    .describe('allow a postgres or mysql URL off this machine that asks for no TLS (the network between is your own); loopback, unix sockets and TLS need no flag'),
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
  statement_timeout_ms: z
    .number()
    .int()
    .min(MIN_SQL_STATEMENT_TIMEOUT_MS)
    .max(MAX_SQL_STATEMENT_TIMEOUT_MS)
    .optional()
    .describe(
      "how long one statement may run, a row lock another session holds waited for included, before the database refuses it (nothing written): PostgreSQL statement_timeout, MySQL/MariaDB innodb_lock_wait_timeout and statement time limit (rounded up to whole seconds), SQLite's wait for another connection's lock on the file (at most 30000: the resource's one connection waits with it; on timers, the gateway serving meanwhile); default 30000 (SQLite 5000)",
    ),
})
  .superRefine((c, ctx) => {
    // MySQL has no UPDATE … RETURNING: it writes one target at a time, so a window there would be a promise not kept
    if (c.write_window !== undefined && /^\s*(mysql|mariadb):/i.test(c.url))
      ctx.addIssue({ code: 'custom', path: ['write_window'], message: 'a mysql upstream is written one target at a time (no UPDATE … RETURNING); remove write_window' })
    if (c.unencrypted !== undefined && /^\s*sqlite:/i.test(c.url))
      ctx.addIssue({ code: 'custom', path: ['unencrypted'], message: 'applies to a postgres or mysql upstream only; a sqlite: upstream is a file and crosses no network (remove the key)' })
    if (c.statement_timeout_ms !== undefined && c.statement_timeout_ms > MAX_SQLITE_STATEMENT_TIMEOUT_MS && c.statement_timeout_ms <= MAX_SQL_STATEMENT_TIMEOUT_MS && /^\s*sqlite:/i.test(c.url))
      ctx.addIssue({ code: 'custom', path: ['statement_timeout_ms'], message: `at most ${MAX_SQLITE_STATEMENT_TIMEOUT_MS} on a sqlite: upstream: a statement waiting for the lock holds the resource's one connection, its other reads by id and writes queued behind it` })
    refuseUnencryptedDatabase(c.url, c.unencrypted === true, ['url'], ctx, 'connector')
  })
export type SqlConnectorConfig = z.infer<typeof sqlConnectorSchema>

export const connectorSchema = z.discriminatedUnion('kind', [sqlConnectorSchema, httpConnectorSchema])
export type ConnectorConfig = z.infer<typeof connectorSchema>
