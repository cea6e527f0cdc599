import { serve, type ServerType } from '@hono/node-server'
import type { AddressInfo, Socket } from 'node:net'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { readFileSync } from 'node:fs'
import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import { createApp } from '../../src/api/index.js'
import { parseConfig, resolvePaths, type WarrantConfig } from '../../src/config/index.js'
import { ensureDemoData } from '../../src/demo/index.js'
import { createLogger, type Gateway, type GatewayOptions, openGateway } from '../../src/gateway/index.js'
import { createTempDir, createTestMysqlDatabase, createTestPostgresDatabase, type StoreKind, type TestDatabase } from './stores.js'

export interface GatewayFixture {
  readonly gateway: Gateway
  readonly config: WarrantConfig
  /** The running server's base URL on loopback. */
  readonly base: string
  /** The server's side of the connection whose client port is `port` (on loopback), if open: what the gateway holds for it. */
  serverSocket(port: number): Socket | undefined
  readonly dir: string
  /** The demo upstream's URL: a sqlite file unless `upstream` chose a database server. */
  readonly upstreamUrl: string
  readonly storeUrl: string
  /** Bearer tokens: an agent scoped to subscriptions and every action, two reviewers, an admin. */
  readonly tokens: { readonly agent: string; readonly reviewer: string; readonly reviewer2: string; readonly admin: string }
  /** JSON over real HTTP as one of the principals above. */
  as(who: keyof GatewayFixture['tokens']): (method: string, path: string, body?: unknown, headers?: Record<string, string>) => ReturnType<typeof call>
  close(): Promise<void>
}

export interface GatewayFixtureOptions {
  readonly store: StoreKind
  /** How many demo records to generate (10,000 by default, as `npm start` does). */
  readonly count?: number
  /** Where the demo `subscriptions` table lives: a SQLite file (default) or a fresh database on a server. */
  readonly upstream?: 'sqlite' | 'postgres' | 'mysql'
  /** Changes to the demo config before it is parsed. */
  readonly edit?: (raw: Record<string, any>) => void
  readonly serve?: boolean
  /** The gateway's store clock (see GatewayOptions.clock); real time by default. */
  readonly clock?: () => Date
  /** Receives every upstream call the gateway makes (GatewayOptions.onCall). */
  readonly onCall?: GatewayOptions['onCall']
}

/**
 * A real gateway on the bundled demo config: its own temp folder, its own store (SQLite file or a fresh
 * PostgreSQL database), a generated demo upstream, and a real HTTP server on 127.0.0.1.
 */
export async function startDemoGateway(options: GatewayFixtureOptions): Promise<GatewayFixture> {
  const dir = await createTempDir('warrant-gw-')
  const pg = options.store === 'postgres' ? await createTestPostgresDatabase() : null
  const raw = parseYaml(readFileSync(new URL('../../config/demo.yaml', import.meta.url), 'utf8')) as Record<string, any>
  const upstreamDb: TestDatabase | null =
    options.upstream === 'postgres' ? await createTestPostgresDatabase() : options.upstream === 'mysql' ? await createTestMysqlDatabase() : null
  const upstreamUrl = upstreamDb?.url ?? `sqlite:${join(dir.path, 'demo.db')}`
  const storeUrl = pg ? pg.url : `sqlite:${join(dir.path, 'warrant.db')}`
  raw.store = storeUrl
  raw.resources.subscriptions.connector.url = upstreamUrl
  // the demo's audit key file lives beside its store: here, in this test's own folder
  raw.audit = { key: { file: 'audit.key', create: true } }
  options.edit?.(raw)
  const config = resolvePaths(parseConfig(raw, 'test config'), dir.path)
  await ensureDemoData({ url: upstreamUrl, count: options.count ?? 10_000 })
  const started = await startGatewayOn(config, { resources: ['subscriptions'], serve: options.serve, clock: options.clock, onCall: options.onCall })
  return {
    ...started,
    dir: dir.path,
    upstreamUrl,
    storeUrl,
    async close() {
      await started.close()
      await pg?.drop()
      await upstreamDb?.drop()
      await dir.drop()
    },
  }
}

/**
 * One demo gateway for the tests of the enclosing `describe`: started before them, closed after them.
 *
 * @example
 * const env = demoGatewayFor({ store: kind, count: 300 })
 * test('…', async () => { const agent = env.fx.as('agent') })
 */
export function demoGatewayFor(options: GatewayFixtureOptions): { readonly fx: GatewayFixture } {
  let fx: GatewayFixture | undefined
  before(async () => {
    fx = await startDemoGateway(options)
  })
  after(async () => {
    await fx?.close()
  })
  return {
    get fx() {
      return fx ?? assert.fail('the gateway is started before the tests')
    },
  }
}

/**
 * A real gateway on a parsed config (its store already chosen), its principals (an agent scoped to
 * `resources` and every action, two reviewers, an admin) and, unless `serve: false`, a real HTTP server on
 * 127.0.0.1. `close()` stops both; the store and upstreams are the caller's.
 */
export async function startGatewayOn(
  config: WarrantConfig,
  options: { readonly resources: readonly string[]; readonly serve?: boolean | undefined; readonly env?: NodeJS.ProcessEnv; readonly clock?: (() => Date) | undefined; readonly onCall?: GatewayOptions['onCall'] },
): Promise<Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>> {
  const gateway = await openGateway({ config, log: createLogger({ level: process.env.WARRANT_TEST_LOG ?? 'silent' }), clock: options.clock, onCall: options.onCall, ...(options.env ? { env: options.env } : {}) })
  const issue = async (name: string, role: 'agent' | 'reviewer' | 'admin') =>
    (await gateway.principals.issue({ name, role, scopes: role === 'agent' ? { resources: [...options.resources], actions: '*' } : undefined })).token
  const tokens = { agent: await issue('test-agent', 'agent'), reviewer: await issue('alice', 'reviewer'), reviewer2: await issue('bob', 'reviewer'), admin: await issue('root', 'admin') }
  const served = options.serve !== false ? await serveGateway(gateway) : null
  const base = served?.base ?? ''
  return {
    gateway,
    config,
    base,
    serverSocket: (port) => served?.sockets.find((s) => s.remotePort === port && !s.destroyed),
    tokens,
    as: (who) => (method, path, body, headers = {}) => call(base, method, path, body, { authorization: `Bearer ${tokens[who]}`, ...headers }),
    async close() {
      await served?.stop()
      await gateway.close()
    },
  }
}

/** The app of `gateway` on a real HTTP server on 127.0.0.1 (a gateway reopened on a fixture's store, say); `stop()` closes the server only. */
export async function serveGateway(gateway: Gateway): Promise<{ readonly base: string; readonly sockets: readonly Socket[]; stop(): Promise<void> }> {
  const app = createApp({ gateway })
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
  })
  // the connections it accepted, the closed ones dropped
  const sockets: Socket[] = []
  const port = (server.address() as AddressInfo).port
  // as `warrant serve` does: review links point where the gateway listens
  gateway.listeningAt({ host: '127.0.0.1', port })
  server.on('connection', (socket: Socket) => {
    sockets.push(socket)
    socket.once('close', () => sockets.splice(sockets.indexOf(socket), 1))
  })
  return {
    base: `http://127.0.0.1:${port}`,
    sockets,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** JSON over real HTTP: the status and the parsed body. */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {
    // not JSON: the raw text is the body
  }
  return { status: response.status, body: parsed, headers: response.headers }
}
