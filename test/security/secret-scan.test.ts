import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { serve, type ServerType } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import BetterSqlite3 from 'better-sqlite3'
import pino from 'pino'
import { createApp } from '../../src/api/index.js'
import { parseConfig } from '../../src/config/index.js'
import { createLogger, type Gateway, openGateway } from '../../src/gateway/index.js'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { createTempDir, type TempDir } from '../support/stores.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

const SECRET = 'wrt-upstream-SECRET-9c1e'
const SECRET_ENV = 'WARRANT_SECRET_SCAN_TOKEN'
const run = promisify(execFile)

/**
 * Every form the secret could take in an output: as written, and base64 / base64url encoded at each of the
 * three byte alignments (signed cursors and tokens are base64url JSON).
 */
function secretForms(): string[] {
  const forms = new Set([SECRET])
  for (const shift of [0, 1, 2])
    for (const encoding of ['base64', 'base64url'] as const) {
      const encoded = Buffer.from(`${'x'.repeat(shift)}${SECRET}`).toString(encoding).replace(/=+$/, '')
      const skip = Math.ceil((shift * 4) / 3) + (shift === 0 ? 0 : 1)
      forms.add(encoded.slice(skip, encoded.length - 4))
    }
  return [...forms].filter((f) => f.length >= 12)
}
const FORMS = secretForms()

function leaks(where: string, text: string | Buffer): string[] {
  const found: string[] = []
  for (const form of FORMS) {
    const i = typeof text === 'string' ? text.indexOf(form) : text.indexOf(Buffer.from(form))
    if (i >= 0) found.push(`${where}: "${form}" at ${i}: …${String(typeof text === 'string' ? text.slice(Math.max(0, i - 80), i + 80) : text.subarray(Math.max(0, i - 80), i + 80).toString('latin1'))}…`)
  }
  return found
}

interface Account {
  id: string
  status: string
  owner: string
  plan: string
  version: number
}

/**
 * An upstream that sees the credential on every call and echoes it back everywhere it can: in declared
 * review fields, undeclared and denied fields, error bodies (JSON and text), write answers and headers.
 */
function echoingUpstream(): Promise<TestUpstream> {
  const accounts = new Map<string, Account>()
  for (let i = 1; i <= 12; i++) {
    const id = `a${String(i).padStart(2, '0')}`
    accounts.set(id, { id, status: i % 3 === 0 ? 'active' : 'past_due', owner: `owner-${i}`, plan: i % 2 ? 'pro' : 'team', version: 1 })
  }
  return startUpstream((req, res) => {
    const presented = String(req.headers.authorization ?? '')
    if (!presented.includes(SECRET)) return sendJson(res, 401, { error: `no credential; got "${presented}"` })
    const echo = { note: `seen with ${presented}`, debug: { auth: presented } }
    const view = (a: Account) => ({ ...a, ...echo, owner: a.id === 'a01' ? `owner via ${presented}` : a.owner })
    const path = req.url.pathname
    if (path === '/accounts' && req.method === 'GET') {
      const all = [...accounts.values()]
      const start = Number(req.url.searchParams.get('cursor') ?? 0)
      const limit = Number(req.url.searchParams.get('limit') ?? 5)
      const page = all.slice(start, start + limit)
      return sendJson(res, 200, { items: page.map(view), next_cursor: start + limit < all.length ? String(start + limit) : null, meta: echo }, { 'x-echo': presented })
    }
    const item = /^\/accounts\/([^/]+)$/.exec(path)
    if (item) {
      const account = accounts.get(decodeURIComponent(item[1]!))
      if (!account) return sendJson(res, 404, { error: `nothing here for ${presented}` })
      if (req.method === 'GET') return sendJson(res, 200, view(account), { etag: `"v${account.version}"`, 'x-echo': presented })
      if (req.method === 'PATCH') {
        if (account.id === 'a05') return sendJson(res, 422, { error: { message: `${presented} lacks scope for a05` } })
        if (account.id === 'a07') {
          res.writeHead(500, { 'content-type': 'text/plain' })
          return res.end(`proxy error for "${presented}"`)
        }
        if (String(req.headers['if-match'] ?? '') !== String(account.version)) return sendJson(res, 412, { error: `version mismatch for ${presented}` })
        const body = JSON.parse(req.body || '{}') as Partial<Account>
        Object.assign(account, body, { version: account.version + 1 })
        return sendJson(res, 200, view(account), { 'x-echo': presented })
      }
    }
    if (path === '/broken') return sendJson(res, 500, { error: `token ${presented} is broken` })
    return sendJson(res, 404, { error: `no route for ${presented}` })
  })
}

/** A webhook receiver on loopback that keeps every delivery, headers and body: they are outputs too. */
async function webhookReceiver(): Promise<{ url: string; received: { headers: string; body: string }[]; close(): Promise<void> }> {
  const received: { headers: string; body: string }[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      received.push({ headers: JSON.stringify(req.headers), body })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

function configFor(dir: string, upstream: TestUpstream, webhookUrl: string): Record<string, unknown> {
  const credential = { scheme: 'Bearer', secret: { env: SECRET_ENV } }
  const fields = { id: 'string', status: 'string', owner: 'string', plan: 'string', version: 'integer', note: 'string' }
  return {
    store: `sqlite:${join(dir, 'warrant.db')}`,
    notifications: {
      webhooks: [
        { name: 'scan-json', url: webhookUrl, format: 'json', secret: { file: join(dir, 'webhook-secret') } },
        { name: 'scan-slack', url: webhookUrl, format: 'slack' },
      ],
      retry: { max_attempts: 2, initial_backoff_ms: 20, max_backoff_ms: 100 },
      timeout_ms: 30_000,
    },
    resources: {
      accounts: {
        description: 'Accounts behind an upstream that echoes its credential',
        environment: { name: 'secret-scan', host: 'loopback' },
        connector: {
          kind: 'http',
          sources: [{ name: 'main', base_url: upstream.origin }],
          credential,
          timeout_ms: 5000,
          list: { path: '/accounts', page_size_param: 'limit', pagination: { style: 'cursor' } },
          get: { path: '/accounts/{id}' },
          version: { from: 'field', field: 'version' },
        },
        fields,
        review_fields: ['id', 'status', 'owner', 'plan'],
        denied_fields: ['note'],
        group_by: ['status', 'plan'],
        actions: {
          suspend: {
            description: 'Suspend a past-due account',
            set: { status: 'suspended' },
            precondition: { status: 'past_due' },
            write: { method: 'PATCH', path: '/accounts/{id}', body: { status: '{{set.status}}' }, if_match: true },
          },
        },
      },
      echoes: {
        description: 'A source that fails with the credential in its error',
        environment: { name: 'secret-scan-broken' },
        connector: {
          kind: 'http',
          sources: [{ name: 'broken', base_url: upstream.origin }],
          credential,
          timeout_ms: 5000,
          list: { path: '/broken', pagination: { style: 'cursor' } },
          get: { path: '/broken/{id}' },
          version: { from: 'field', field: 'version' },
        },
        fields,
        review_fields: ['id', 'status'],
      },
    },
  }
}

describe('credential isolation: the upstream secret appears in no output and nowhere in the store', () => {
  let dir: TempDir
  let upstream: TestUpstream
  let hooks: Awaited<ReturnType<typeof webhookReceiver>>
  let gateway: Gateway
  let server: ServerType
  let base = ''
  let configPath = ''
  const logFile = () => join(dir.path, 'gateway.log')
  /** Everything any surface returned or printed, labelled. */
  const outputs: { where: string; text: string }[] = []
  const tokens = { agent: '', reviewer: '', admin: '' }

  async function http(who: keyof typeof tokens, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens[who]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    outputs.push({ where: `HTTP ${method} ${path} → ${response.status}`, text: `${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${text}` })
    let parsed: any = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // CSV, NDJSON
    }
    return { status: response.status, body: parsed, text }
  }

  async function cli(args: string[], expectedCode = 0) {
    const env = { ...process.env, [SECRET_ENV]: SECRET, WARRANT_LOG_LEVEL: 'trace', WARRANT_TOKEN: tokens.admin }
    let result: { code: number; stdout: string; stderr: string }
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args, '--config', configPath], { cwd: dir.path, env, maxBuffer: 64 * 1024 * 1024 })
      result = { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string }
      result = { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
    }
    outputs.push({ where: `CLI warrant ${args.join(' ')} (exit ${result.code}) stdout`, text: result.stdout })
    outputs.push({ where: `CLI warrant ${args.join(' ')} stderr`, text: result.stderr })
    assert.equal(result.code, expectedCode, `warrant ${args.join(' ')}: ${result.stderr}`)
    return result
  }

  before(async () => {
    dir = await createTempDir('warrant-secret-scan-')
    upstream = await echoingUpstream()
    hooks = await webhookReceiver()
    writeFileSync(join(dir.path, 'webhook-secret'), 'webhook-signing-key-not-the-upstream-secret\n')
    const raw = configFor(dir.path, upstream, hooks.url)
    configPath = join(dir.path, 'warrant.json')
    writeFileSync(configPath, JSON.stringify(raw, null, 2))
    gateway = await openGateway({
      config: parseConfig(raw, 'secret-scan config'),
      env: { [SECRET_ENV]: SECRET },
      log: createLogger({ level: 'trace', destination: pino.destination({ dest: logFile(), sync: true }) }),
    })
    const app = createApp({ gateway })
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    tokens.agent = (await gateway.principals.issue({ name: 'scan-agent', role: 'agent', scopes: { resources: ['accounts', 'echoes'], actions: ['suspend'] } })).token
    tokens.reviewer = (await gateway.principals.issue({ name: 'scan-reviewer', role: 'reviewer' })).token
    tokens.admin = (await gateway.principals.issue({ name: 'scan-admin', role: 'admin' })).token
  })
  after(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    await gateway?.close().catch(() => undefined)
    await upstream?.close()
    await hooks?.close()
    await dir?.drop()
  })

  test('the scan finds the secret as written and base64-encoded at any alignment', () => {
    assert.equal(leaks('plain', `token=${SECRET};`).length, 1)
    for (const prefix of ['', 'a', 'ab', '{"position":"'])
      for (const encoding of ['base64', 'base64url'] as const) assert.ok(leaks(encoding, Buffer.from(`${prefix}${SECRET}"}`).toString(encoding)).length > 0, `${encoding} after "${prefix}"`)
    assert.ok(leaks('bytes', Buffer.from(`\u0000${SECRET}\u0000`)).length > 0)
  })

  test('the whole flow over HTTP, MCP and the CLI, then every output, the log and the store are scanned', { timeout: 180_000 }, async () => {
    // ── HTTP: reads, including the failing source and an unknown record (error bodies echo the secret)
    assert.equal((await http('agent', 'GET', '/v1/resources')).status, 200)
    const search = await http('agent', 'POST', '/v1/resources/accounts/search', { page_size: 5 })
    assert.equal(search.status, 200)
    assert.equal(search.body.complete, true)
    assert.equal(search.body.items.length, 12)
    assert.ok(search.body.items.some((i: any) => i.owner === 'owner via Bearer [redacted]'), 'the echo reached the gateway and was redacted')
    const broken = await http('agent', 'POST', '/v1/resources/echoes/search', {})
    assert.equal(broken.status, 200)
    assert.equal(broken.body.complete, false)
    assert.equal((await http('agent', 'GET', '/v1/resources/accounts/records/a01')).status, 200)
    assert.ok([404, 502].includes((await http('agent', 'GET', '/v1/resources/accounts/records/zz99')).status))
    assert.equal((await http('agent', 'POST', '/v1/resources/accounts/search', { fields: ['note'] })).status, 400)

    // ── HTTP: selection, its pages, exports
    const selection = await http('agent', 'POST', '/v1/resources/accounts/selections', { filter: { status: 'past_due' }, exclude: [{ rule: 'team_plan', filter: { plan: 'team' } }], page_size: 5 })
    assert.equal(selection.status, 201, selection.text)
    assert.equal(selection.body.complete, true)
    const sel = selection.body.selection_id
    await http('agent', 'GET', `/v1/selections/${sel}`)
    await http('agent', 'GET', `/v1/selections/${sel}/records?limit=2`)
    await http('agent', 'GET', `/v1/selections/${sel}/excluded?rule=team_plan`)
    const csv = await http('agent', 'GET', `/v1/selections/${sel}/export?format=csv`)
    assert.equal(csv.status, 200)
    assert.match(csv.text, /owner via Bearer \[redacted\]/)
    assert.equal((await http('agent', 'GET', `/v1/selections/${sel}/export?format=ndjson`)).status, 200)

    // ── HTTP: plan, approval, commit, operation (a05 fails with the secret in its error, a07 is unknown)
    const plan = await http('agent', 'POST', `/v1/selections/${sel}/plans`, { action: { type: 'suspend' } })
    assert.equal(plan.status, 201, plan.text)
    await http('agent', 'GET', `/v1/plans/${plan.body.plan_id}/changes`)
    const approval = await http('reviewer', 'POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })
    assert.equal(approval.status, 201, approval.text)
    const commit = await http('agent', 'POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: plan.body.plan_digest }, { 'idempotency-key': randomUUID() })
    assert.equal(commit.status, 202, commit.text)
    const operationId = commit.body.operation_id
    await gateway.operations.waitFor(operationId, 30_000)
    const operation = await http('agent', 'GET', `/v1/operations/${operationId}`)
    assert.ok(['partially_failed', 'completed_with_skips', 'completed_with_unknown', 'halted', 'failed'].includes(operation.body.state), operation.text)
    const results = await http('agent', 'GET', `/v1/operations/${operationId}/results?limit=1000`)
    const a05 = results.body.results.find((r: any) => r.id === 'a05')
    assert.equal(a05?.outcome, 'failed', results.text)
    assert.match(JSON.stringify(a05), /Bearer \[redacted\] lacks scope/, 'the upstream error, echo and all, is kept for the reviewer, redacted')
    for (const outcome of ['succeeded', 'failed', 'unknown', 'skipped', 'pending']) await http('agent', 'GET', `/v1/operations/${operationId}/results?outcome=${outcome}`)
    await http('agent', 'POST', `/v1/operations/${operationId}/reconcile`)
    await http('agent', 'POST', `/v1/operations/${operationId}/compensation`)
    await http('reviewer', 'GET', `/v1/plans/${plan.body.plan_id}`)

    // ── MCP over /mcp: every tool
    const mcp = new Client({ name: 'secret-scan', version: '1' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${tokens.agent}` } } }))
    const tool = async (name: string, args: Record<string, unknown>) => {
      const result = await mcp.callTool({ name, arguments: args })
      outputs.push({ where: `MCP ${name}`, text: JSON.stringify(result) })
      return result as any
    }
    outputs.push({ where: 'MCP tools/list', text: JSON.stringify(await mcp.listTools()) })
    await tool('list_resources', {})
    await tool('search', { resource: 'accounts', page_size: 5 })
    await tool('search', { resource: 'echoes' })
    const mcpSelection = (await tool('create_selection', { resource: 'accounts', filter: { status: 'past_due' }, page_size: 5 })).structuredContent
    await tool('read_selection', { selection_id: mcpSelection.selection_id })
    await tool('read_selection', { selection_id: mcpSelection.selection_id, part: 'records' })
    const mcpPlan = (await tool('propose_change', { selection_id: mcpSelection.selection_id, action: { type: 'suspend' } })).structuredContent
    await tool('commit_change', { plan_id: mcpPlan.plan_id, expected_digest: mcpPlan.plan_digest, idempotency_key: randomUUID() })
    await http('reviewer', 'POST', `/v1/plans/${mcpPlan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: mcpPlan.plan_digest })
    await tool('get_plan', { plan_id: mcpPlan.plan_id })
    const mcpReceipt = (await tool('commit_change', { plan_id: mcpPlan.plan_id, expected_digest: mcpPlan.plan_digest, idempotency_key: randomUUID() })).structuredContent
    await tool('get_operation', { operation_id: mcpReceipt.operation_id, wait_ms: 20_000 })
    await tool('get_operation', { operation_id: operationId, part: 'results', limit: 1000 })
    await tool('propose_compensation', { operation_id: operationId })
    await mcp.close()

    // ── the audit trail, over HTTP
    await http('reviewer', 'GET', '/v1/audit?limit=1000')
    await http('reviewer', 'GET', `/v1/audit?operation_id=${operationId}&level=call&limit=1000`)
    await http('reviewer', 'GET', '/v1/audit/verify')

    // ── the CLI, as a real subprocess on the same store, logging at trace level to stderr
    await gateway.audit.flush()
    await cli(['search', 'accounts'])
    // the broken source makes the search incomplete: exit 5, documented for scripts
    await cli(['search', 'echoes', '--json'], 5)
    await cli(['select', 'accounts', '-f', 'status=past_due', '--json'])
    // `operation show` exits as `watch` does: 0 only when every target succeeded, 3 when it finished otherwise
    const { state } = await gateway.store.db.selectFrom('operations').select('state').where('id', '=', operationId).executeTakeFirstOrThrow()
    await cli(['operation', 'show', operationId, '--json'], state === 'succeeded' ? 0 : 3)
    await cli(['operation', 'results', operationId])
    await cli(['token', 'list'])
    const exported = await cli(['audit', 'export'])
    assert.ok(exported.stdout.split('\n').filter(Boolean).length > 20, 'the export holds the run')
    await cli(['audit', 'verify'])

    // ── MCP over stdio (`warrant mcp`), its stderr logging at trace level
    const stdio = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', TSX_LOADER, CLI_ENTRY, 'mcp', '--config', configPath],
      env: { ...(process.env as Record<string, string>), [SECRET_ENV]: SECRET, WARRANT_LOG_LEVEL: 'trace', WARRANT_TOKEN: tokens.agent },
      stderr: 'pipe',
      cwd: dir.path,
    })
    let stdioErr = ''
    stdio.stderr?.on('data', (chunk: Buffer) => (stdioErr += chunk.toString('utf8')))
    const local = new Client({ name: 'secret-scan-stdio', version: '1' })
    await local.connect(stdio)
    for (const [name, args] of [
      ['search', { resource: 'accounts' }],
      ['search', { resource: 'echoes' }],
      ['read_selection', { selection_id: sel }],
      ['get_operation', { operation_id: operationId }],
      ['get_operation', { operation_id: operationId, part: 'results', outcome: 'failed' }],
    ] as const)
      outputs.push({ where: `MCP stdio ${name}`, text: JSON.stringify(await local.callTool({ name, arguments: args })) })
    await local.close()
    outputs.push({ where: 'MCP stdio stderr', text: stdioErr })
    assert.match(stdioErr, /MCP server ready/)

    // The secret did reach the upstream, on every call: the scan below is not vacuous.
    assert.ok(upstream.seen.length > 30)
    assert.ok(upstream.seen.every((r) => r.headers.authorization === `Bearer ${SECRET}`))
    assert.ok(outputs.some((o) => o.text.includes('[redacted]')), 'echoed text reached the outputs, redacted')

    // ── the webhook deliveries (plans awaiting review, decisions, operation ends), headers and bodies
    await gateway.notifications.flush()
    assert.ok(hooks.received.length >= 3, `webhooks were delivered (${hooks.received.length})`)
    for (const [i, hook] of hooks.received.entries()) outputs.push({ where: `webhook delivery ${i}`, text: `${hook.headers}\n\n${hook.body}` })

    // ── close everything, so the WAL is checkpointed and every log line is written
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await gateway.close()

    const found: string[] = []
    for (const output of outputs) found.push(...leaks(output.where, output.text))
    const log = readFileSync(logFile(), 'utf8')
    assert.ok(log.length > 0, 'the gateway logged')
    found.push(...leaks('gateway log file', log))

    // every table, every column, of the store
    const dbPath = join(dir.path, 'warrant.db')
    const db = new BetterSqlite3(dbPath, { readonly: true })
    try {
      const tables = (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((t) => t.name)
      assert.ok(tables.includes('audit_events') && tables.includes('operation_targets') && tables.includes('selection_members'))
      let rows = 0
      for (const table of tables) {
        const all = db.prepare(`select * from "${table}"`).all() as Record<string, unknown>[]
        rows += all.length
        for (const row of all)
          for (const [column, value] of Object.entries(row)) {
            const text = Buffer.isBuffer(value) ? value : String(value)
            found.push(...leaks(`store ${table}.${column}`, text))
          }
      }
      assert.ok(rows > 100, `the store holds the run (${rows} rows)`)
    } finally {
      db.close()
    }
    // and the raw bytes of the database files (free pages and the WAL included)
    for (const file of ['warrant.db', 'warrant.db-wal', 'warrant.db-shm', 'warrant.db-journal'])
      if (existsSync(join(dir.path, file))) found.push(...leaks(`file ${file}`, readFileSync(join(dir.path, file))))

    assert.deepEqual(found, [], `the secret leaked:\n${found.join('\n')}`)
  })
})
