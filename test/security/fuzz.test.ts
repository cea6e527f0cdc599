import assert from 'node:assert/strict'
import { randomInt, randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import fc from 'fast-check'
import { sql } from 'kysely'
import type { z } from 'zod'
import { createApp } from '../../src/api/index.js'
import { ERROR_STATUS } from '../../src/contract/index.js'
import { WARRANT_TOOLS } from '../../src/mcp/index.js'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS, type StoreKind } from '../support/stores.js'

/**
 * Garbage against every /v1 endpoint (read from the app's own OpenAPI registry, so a new endpoint is fuzzed
 * without touching this file), every MCP tool over the real transports (streamable HTTP at /mcp and a `warrant
 * mcp` subprocess on stdio) and the review pages' forms, on both stores: never a 500 or `internal`, never an
 * unhandled rejection, every refusal a known code with its own status, no change of state, and one audit row
 * for each /v1 request and each MCP tool call.
 *
 * A fresh seed every run, so that runs explore; it is printed, and WARRANT_FUZZ_SEED=<seed> replays a run (a
 * failure also prints fast-check's seed and path). WARRANT_FUZZ_RUNS sets the runs per route and per tool:
 * the default is sized for a 2-core machine running two test files at once.
 */

const RUNS = Number(process.env.WARRANT_FUZZ_RUNS ?? 30)
const SEED = process.env.WARRANT_FUZZ_SEED ? Number(process.env.WARRANT_FUZZ_SEED) : randomInt(2 ** 31 - 1)
console.log(`fuzz seed ${SEED}: replay with WARRANT_FUZZ_SEED=${SEED}`)
const KNOWN_CODES = new Set(Object.keys(ERROR_STATUS))

interface RouteInfo {
  readonly method: string
  readonly path: string
  readonly params: string[]
  readonly query: z.ZodObject | null
  readonly body: z.ZodType | null
  readonly bodyRequired: boolean
  readonly headers: string[]
}

/** Every /v1 route the app registers, with the zod schemas it parses with. */
function v1Routes(fx: GatewayFixture): RouteInfo[] {
  const app = createApp({ gateway: fx.gateway })
  const routes: RouteInfo[] = []
  for (const definition of app.openAPIRegistry.definitions as any[]) {
    if (definition.type !== 'route' || !String(definition.route.path).startsWith('/v1')) continue
    const route = definition.route
    const params = route.request?.params ? Object.keys(route.request.params.shape) : []
    const body = route.request?.body?.content?.['application/json']?.schema ?? null
    routes.push({
      method: String(route.method).toUpperCase(),
      path: route.path,
      params,
      query: route.request?.query ?? null,
      body,
      bodyRequired: route.request?.body?.required !== false,
      headers: route.request?.headers ? Object.keys(route.request.headers.shape) : [],
    })
  }
  return routes
}

/** Every row of every table, keyed by table; `tokens.last_used_at` and the audit trail are compared apart. */
async function snapshot(fx: GatewayFixture): Promise<{ tables: Record<string, string[]>; audit: string[] }> {
  const db = fx.gateway.store.db
  await fx.gateway.audit.flush()
  const names =
    fx.gateway.store.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)).rows.map((r) => r.name)
  const tables: Record<string, string[]> = {}
  let audit: string[] = []
  for (const name of names.sort()) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)).rows
    if (name === 'audit_events') {
      audit = rows.map((r) => JSON.stringify(r)).sort()
      continue
    }
    tables[name] = rows
      .map((row) => {
        // when a token or a review session was last used moves with every call; nothing else may
        const { last_used_at: _used, last_seen_at: _seen, ...rest } = row
        if (name === 'kv' && row.key === 'audit_chain_head') return 'audit_chain_head'
        if (name.startsWith('kysely_migration')) return JSON.stringify(row)
        return JSON.stringify(name === 'tokens' || name === 'review_sessions' ? rest : row)
      })
      .sort()
  }
  return { tables, audit }
}

function assertUnchanged(before: Awaited<ReturnType<typeof snapshot>>, after: Awaited<ReturnType<typeof snapshot>>, what: string): void {
  for (const table of Object.keys(before.tables)) assert.deepEqual(after.tables[table], before.tables[table], `${what}: table ${table} changed`)
  assert.deepEqual(Object.keys(after.tables), Object.keys(before.tables))
  // The audit trail is append-only: the refused attempts are recorded (that is its job), nothing older changes.
  const kept = new Set(after.audit)
  assert.ok(before.audit.every((row) => kept.has(row)), `${what}: an existing audit row changed`)
}

const printable = fc.stringMatching(/^[\x21-\x7e]{0,120}$/)
/** Path segments: anything, percent-encoded, including traversal attempts and huge ids. */
const segment = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom('..', '%2e%2e', '.', '', ' ', '%00', 'subscriptions', 'x'.repeat(300), '{id}', 'null', '-1', '0'),
  printable,
)

function queryArbitrary(route: RouteInfo): fc.Arbitrary<string> {
  const keys = route.query ? Object.keys(route.query.shape) : []
  const known = keys.length ? fc.dictionary(fc.constantFrom(...keys), fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('-1', '0', '1e9', 'NaN', 'csv', 'ndjson', 'succeeded', 'true', '[]'))) : fc.constant({})
  return fc.oneof(
    fc.constant(''),
    known.map((d) => `?${new URLSearchParams(d as Record<string, string>).toString()}`),
    fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 })).map((d) => `?${new URLSearchParams(d).toString()}`),
    fc.string({ maxLength: 60 }).map((s) => `?${encodeURIComponent(s).replace(/%3D/g, '=').replace(/%26/g, '&')}`),
  )
}

/** Near-valid bodies (the route's own keys with wrong values), arbitrary JSON, and raw text that is not JSON. */
function bodyArbitrary(route: RouteInfo): fc.Arbitrary<{ raw: string; parsed: unknown | undefined }> {
  const shape = route.body && 'shape' in route.body ? Object.keys((route.body as z.ZodObject).shape) : []
  const nearValid = shape.length
    ? fc.dictionary(fc.constantFrom(...shape), fc.jsonValue({ maxDepth: 3 }), { maxKeys: shape.length + 1 })
    : fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))
  return fc.oneof(
    fc.oneof(nearValid, fc.jsonValue({ maxDepth: 4 })).map((v) => ({ raw: JSON.stringify(v), parsed: v as unknown })),
    fc.string({ maxLength: 200 }).map((raw) => {
      try {
        return { raw, parsed: JSON.parse(raw) as unknown }
      } catch {
        return { raw, parsed: undefined }
      }
    }),
    fc.constantFrom('', '{', '[]', 'null', '{"filter":', '\u0000', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}').map((raw) => {
      try {
        return { raw, parsed: JSON.parse(raw) as unknown }
      } catch {
        return { raw, parsed: undefined }
      }
    }),
  )
}

/** Audit rows so far, by surface; compared before and after a batch of requests. */
async function auditCount(fx: GatewayFixture, where: 'http' | 'mcp'): Promise<number> {
  await fx.gateway.audit.flush()
  const db = fx.gateway.store.db
  const query = db.selectFrom('audit_events').select(db.fn.countAll<number>().as('n')).where('level', '=', 'run')
  const row = await (where === 'http' ? query.where('action', 'like', '% /v1%') : query.where('action', 'like', 'mcp:%')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Run-level rows of requests to /mcp refused before the MCP server read them. */
async function doorRefusals(fx: GatewayFixture): Promise<number> {
  await fx.gateway.audit.flush()
  const db = fx.gateway.store.db
  const row = await db.selectFrom('audit_events').select(db.fn.countAll<number>().as('n')).where('action', '=', 'POST /mcp').where('summary', 'like', '%"outcome":"refused"%').executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Cookies a response sets, as a Cookie header (name=value; …), merged over `jar`. */
function cookies(response: Response, jar: Record<string, string> = {}): Record<string, string> {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const at = pair!.indexOf('=')
    jar[pair!.slice(0, at)] = pair!.slice(at + 1)
  }
  return jar
}
const cookieHeader = (jar: Record<string, string>) => Object.entries(jar).map(([k, v]) => `${k}=${v}`).join('; ')
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? ''

for (const kind of STORE_KINDS) describe(`fuzz: garbage never breaks the gateway and never changes its state (${kind} store)`, () => fuzzSuite(kind))

function fuzzSuite(kind: StoreKind): void {
  let fx: GatewayFixture
  let configPath = ''
  const rejections: unknown[] = []
  const onRejection = (reason: unknown) => rejections.push(reason)
  const ids: Record<string, string[]> = { selection: [], plan: [], operation: [] }

  before(async () => {
    process.on('unhandledRejection', onRejection)
    let raw: Record<string, unknown> = {}
    fx = await startDemoGateway({ store: kind, count: 300, edit: (config) => void (raw = config) })
    // the same store and upstream for a `warrant mcp` subprocess
    configPath = join(fx.dir, 'warrant.json')
    writeFileSync(configPath, JSON.stringify(raw, null, 2))
    const agent = fx.as('agent')
    // state to aim at: a pending plan, and a finished operation of a committed one
    for (const region of ['eu', 'us']) {
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      ids.selection!.push(selection.body.selection_id)
      const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'fuzz fixture' } } })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
      ids.plan!.push(plan.body.plan_id)
      if (region === 'us') {
        assert.equal((await fx.as('reviewer')('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })).status, 201)
        const commit = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: plan.body.plan_digest }, { 'idempotency-key': randomUUID() })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        ids.operation!.push(commit.body.operation_id)
        const done = await fx.gateway.operations.waitFor(commit.body.operation_id, 30_000)
        assert.ok(['succeeded', 'completed_with_skips', 'partially_failed'].includes(done.state), done.state)
      }
    }
  })
  after(async () => {
    process.off('unhandledRejection', onRejection)
    await fx?.close()
  })

  test('every /v1 endpoint: arbitrary path params, query strings and bodies; one audit row each', { timeout: 600_000 }, async () => {
    const routes = v1Routes(fx)
    assert.ok(routes.length >= 15, `the registry lists the API (${routes.length} routes)`)
    const before = await snapshot(fx)
    const auditBefore = await auditCount(fx, 'http')
    let sent = 0
    const realIds = [...ids.selection!, ...ids.plan!, ...ids.operation!]
    for (const route of routes) {
      const started = Date.now()
      const mutating = route.method !== 'GET' && !route.path.endsWith('/search')
      // A real id only where the body is garbage: a well-formed request on a real id is not garbage.
      const idArb = route.body && route.bodyRequired ? fc.oneof(segment, fc.constantFrom(...realIds)) : segment
      const request = fc.record({
        params: fc.tuple(...route.params.map(() => idArb)),
        query: queryArbitrary(route),
        body: bodyArbitrary(route),
        who: fc.constantFrom('agent' as const, 'reviewer' as const),
        key: fc.option(printable, { nil: undefined }),
        contentType: fc.constantFrom('application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded'),
      })
      await fc.assert(
        fc.asyncProperty(request, async ({ params, query, body, who, key, contentType }) => {
          if (route.body && mutating) fc.pre(body.parsed === undefined || !route.body.safeParse(body.parsed).success)
          let path = route.path
          route.params.forEach((name, i) => (path = path.replace(`{${name}}`, encodeURIComponent(params[i] as string))))
          const headers: Record<string, string> = { 'content-type': contentType }
          if (key !== undefined) headers['idempotency-key'] = key
          const sendBody = route.method !== 'GET' && route.method !== 'HEAD'
          sent += 1
          const response = await fx.as(who)(route.method, `${path}${query}`, sendBody ? body.raw : undefined, headers)
          const where = `${route.method} ${path}${query} ${sendBody ? body.raw.slice(0, 200) : ''} → ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`
          assert.ok(response.status < 500, where)
          if (response.status >= 400) {
            const code = response.body?.error?.code
            assert.ok(KNOWN_CODES.has(code), `unknown error code: ${where}`)
            assert.notEqual(code, 'internal', where)
            assert.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], response.status, `code and status disagree: ${where}`)
          } else assert.ok(!mutating, `garbage was accepted: ${where}`)
        }),
        // a route that takes no input at all (GET /v1/resources, /v1/audit/verify) only gets junk query strings
        { numRuns: route.params.length || route.query || route.body ? RUNS : Math.min(RUNS, 10), seed: SEED, endOnFailure: true },
      )
      if (process.env.WARRANT_FUZZ_TIMING) console.error(`${route.method} ${route.path}: ${Date.now() - started} ms`)
    }
    assert.deepEqual(rejections, [], 'no unhandled rejection')
    assertUnchanged(before, await snapshot(fx), 'HTTP fuzz')
    // Every request leaves a run-level row, refused or not (the audit trail's job). A request that leaves none
    // is a hole in the record (issue #10 item 2).
    assert.equal((await auditCount(fx, 'http')) - auditBefore, sent, 'one audit row per /v1 request')
  })

  /**
   * Every tool with arbitrary arguments through `client`; returns how many calls were made, and how many were
   * sent twice because the transport itself failed (a keep-alive socket closed under a busy machine is not a
   * finding; a second transport failure is).
   */
  async function fuzzTools(client: Client, where: string): Promise<{ calls: number; resent: number; door: number }> {
    const { tools } = await client.listTools() // caches the output schemas: every answer is validated against them
    assert.equal(tools.length, WARRANT_TOOLS.length)
    const realIds = [...ids.selection!, ...ids.plan!, ...ids.operation!]
    const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(...realIds), fc.constantFrom('subscriptions', 'pause_collection', 'records', 'excluded', 'results', 'changes', 'overview'), segment)
    let calls = 0
    let resent = 0
    let door = 0
    const call = async (name: string, input: Record<string, unknown>) => {
      try {
        return await client.callTool({ name, arguments: input })
      } catch (error) {
        // Over HTTP, a body holding a "__proto__" key is refused at the door (400 invalid_request naming it), before
        // the MCP server parses it: a plain-object copy of it would lose the key, so the tool could not see it.
        const text = String((error as Error)?.message)
        if ((error as { code?: unknown })?.code === 400 && text.includes('"code":"invalid_request"') && text.includes('\\"__proto__\\" key')) {
          door += 1
          return { doorRefused: text }
        }
        if (!/fetch failed|other side closed|socket|ECONNRESET/i.test(text + String((error as { cause?: Error })?.cause?.message))) throw error
        resent += 1
        return client.callTool({ name, arguments: input })
      }
    }
    for (const tool of WARRANT_TOOLS) {
      const keys = Object.keys(tool.input.shape)
      const anyKeys = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }))
      const args = keys.length
        ? fc.oneof(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length }), anyKeys, fc.dictionary(fc.constantFrom(...keys, 'extra'), value))
        : fc.oneof(anyKeys, fc.constant({}))
      await fc.assert(
        fc.asyncProperty(args, async (input) => {
          // a well-formed request to a tool that changes state is not garbage
          if (!tool.annotations.readOnlyHint) fc.pre(!tool.input.safeParse(input).success)
          calls += 1
          const result = (await call(tool.name, input as Record<string, unknown>)) as any
          const at = `${where} ${tool.name}(${JSON.stringify(input).slice(0, 300)}) → ${JSON.stringify(result).slice(0, 300)}`
          if (result.doorRefused) {
            assert.ok(Object.keys(input).includes('__proto__') || JSON.stringify(input).includes('"__proto__"'), at)
          } else if (result.isError) {
            const code = result.structuredContent?.error?.code
            assert.ok(KNOWN_CODES.has(code), `unknown error code: ${at}`)
            assert.notEqual(code, 'internal', at)
            assert.match(result.content[0].text, new RegExp(`^REFUSED \\(${code}\\)`), at)
          } else {
            assert.ok(tool.annotations.readOnlyHint, `garbage was accepted: ${at}`)
            assert.ok(result.structuredContent && typeof result.structuredContent === 'object', at)
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      )
    }
    return { calls, resent, door }
  }

  test('every MCP tool over /mcp (streamable HTTP): arbitrary arguments; one audit row per call', { timeout: 600_000 }, async () => {
    const client = new Client({ name: 'fuzz-http', version: '0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${fx.tokens.agent}` } } }))
    const before = await snapshot(fx)
    const auditBefore = await auditCount(fx, 'mcp')
    try {
      const doorBefore = await doorRefusals(fx)
      const { calls, resent, door } = await fuzzTools(client, '/mcp')
      const rows = (await auditCount(fx, 'mcp')) - auditBefore
      // a call refused at the door is the request's row (POST /mcp, refused), not a tool call's
      assert.equal((await doorRefusals(fx)) - doorBefore, door, 'one audit row per call refused at the door')
      assert.ok(rows >= calls - door && rows <= calls - door + resent, `one audit row per tool call: ${rows} rows, ${calls} calls (${resent} resent, ${door} refused at the door)`)
    } finally {
      await client.close()
    }
    assert.deepEqual(rejections, [], 'no unhandled rejection')
    assertUnchanged(before, await snapshot(fx), 'MCP fuzz over /mcp')
  })

  test('every MCP tool over stdio (a `warrant mcp` subprocess on the same store): arbitrary arguments; one audit row per call', { timeout: 600_000 }, async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', configPath],
      env: { ...(process.env as Record<string, string>), WARRANT_TOKEN: fx.tokens.agent, WARRANT_LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    })
    const client = new Client({ name: 'fuzz-stdio', version: '0' })
    const errors: Error[] = []
    client.onerror = (error) => errors.push(error)
    await client.connect(transport)
    const before = await snapshot(fx)
    const auditBefore = await auditCount(fx, 'mcp')
    try {
      const { calls, resent } = await fuzzTools(client, 'stdio')
      assert.equal(resent, 0)
      assert.equal((await auditCount(fx, 'mcp')) - auditBefore, calls, 'one audit row per tool call')
    } finally {
      await client.close()
    }
    assert.deepEqual(errors, [], 'no protocol error on stdio')
    assertUnchanged(before, await snapshot(fx), 'MCP fuzz over stdio')
  })

  test('the review forms: arbitrary fields, CSRF tokens, content types and ids; signed in or not', { timeout: 600_000 }, async () => {
    // a reviewer's session, opened through the sign-in form as a browser would
    const form = await fetch(`${fx.base}/review/sign-in`)
    const jar = cookies(form)
    const signInCsrf = csrfOf(await form.text())
    const signedIn = await fetch(`${fx.base}/review/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
      body: new URLSearchParams({ csrf: signInCsrf, token: fx.tokens.reviewer }).toString(),
    })
    assert.equal(signedIn.status, 303)
    cookies(signedIn, jar)
    const page = await fetch(`${fx.base}/review/plans/${ids.plan![0]}`, { headers: { cookie: cookieHeader(jar) } })
    assert.equal(page.status, 200)
    const csrf = csrfOf(await page.text())
    assert.ok(csrf.length > 10)

    const before = await snapshot(fx)
    const planIds = ids.plan!
    // A real operation or selection only with a wrong CSRF token: with the right one, proposing a compensation
    // or recovering is a well-formed request, not garbage. A real plan is safe with any form: the digest is
    // never the plan's, so no decision is recorded.
    const target = fc.oneof(
      fc.record({ path: fc.constant('/review/plans/{id}/decision'), id: fc.oneof(segment, fc.constantFrom(...planIds)), realCsrf: fc.boolean() }),
      fc.record({ path: fc.constantFrom('/review/operations/{id}/compensation', '/review/selections/{id}/recover', '/review/selections/{id}/retry'), id: segment, realCsrf: fc.boolean() }),
      fc.record({ path: fc.constantFrom('/review/operations/{id}/compensation', '/review/selections/{id}/recover', '/review/selections/{id}/retry'), id: fc.constantFrom(...ids.operation!, ...ids.selection!), realCsrf: fc.constant(false) }),
      fc.record({ path: fc.constant('/review/sign-in'), id: fc.constant(''), realCsrf: fc.boolean() }),
    )
    const fields = fc.dictionary(
      fc.oneof(fc.constantFrom('decision', 'plan_digest', 'comment', 'csrf', 'token', 'next', 'ids', '__proto__'), fc.string({ maxLength: 12 })),
      fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('approve', 'reject', '', 'sha256:' + '0'.repeat(64), '\u0000', '\ud800', 'x'.repeat(5000))),
      { maxKeys: 6 },
    )
    const request = fc.record({
      target,
      fields,
      signedIn: fc.boolean(),
      contentType: fc.constantFrom('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json', 'text/plain'),
      origin: fc.option(fc.constantFrom('http://evil.example', 'null', fx.base), { nil: undefined }),
    })
    await fc.assert(
      fc.asyncProperty(request, async ({ target: t, fields: f, signedIn: withSession, contentType, origin }) => {
        const path = t.path.replace('{id}', encodeURIComponent(t.id))
        const body = new URLSearchParams({ ...f, ...(t.realCsrf ? { csrf } : {}) }).toString()
        const headers: Record<string, string> = { 'content-type': contentType }
        if (withSession) headers.cookie = cookieHeader(jar)
        if (origin !== undefined) headers.origin = origin
        const response = await fetch(`${fx.base}${path}`, { method: 'POST', redirect: 'manual', headers, body })
        const text = await response.text()
        assert.ok(response.status < 500, `POST ${path} ${body.slice(0, 200)} → ${response.status} ${text.slice(0, 300)}`)
      }),
      { numRuns: RUNS * 4, seed: SEED, endOnFailure: true },
    )
    assert.deepEqual(rejections, [], 'no unhandled rejection')
    assertUnchanged(before, await snapshot(fx), 'review form fuzz')
  })

  test('unauthenticated garbage is refused before anything else, on /v1 and /mcp', async () => {
    const before = await snapshot(fx)
    for (const path of ['/v1/resources', '/v1/resources/subscriptions/selections', '/mcp']) {
      const send = () => fetch(`${fx.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer wrt_agent_garbage' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' })
      // a keep-alive socket the server closed while the MCP fuzz ran is not a finding: one retry
      const response = await send().catch(send)
      assert.equal(response.status, 401, path)
      assert.equal(((await response.json()) as any).error.code, 'unauthenticated')
    }
    assertUnchanged(before, await snapshot(fx), 'unauthenticated calls')
  })
}
