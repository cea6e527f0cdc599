import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { caller, type Caller } from '../../operations/support/flow.js'
import { type GatewayFixture, startDemoGateway } from '../../support/gateway-fixture.js'
import type { StoreKind } from '../../support/stores.js'

export interface UpstreamExec {
  exec(statement: string): Promise<void>
  close(): Promise<void>
}

/** The demo gateway's upstream database (a SQLite file or a PostgreSQL URL), to add tables beside the demo's. */
export async function openUpstream(url: string): Promise<UpstreamExec> {
  if (url.startsWith('sqlite:')) {
    const db = new BetterSqlite3(url.slice('sqlite:'.length))
    return { exec: async (s) => void db.exec(s), close: async () => void db.close() }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return { exec: async (s) => void (await client.query(s)), close: () => client.end() }
}

/**
 * A demo gateway on `kind` as both store and upstream, with a resource more per name of `resources` (each given the
 * raw config, to reach the demo's environment and upstream URL), the upstream opened to create their tables, and an
 * agent scoped to them and every action. `close()` closes the upstream and the gateway.
 */
export async function startWithResources(kind: StoreKind, agentName: string, resources: Readonly<Record<string, (config: Record<string, any>) => Record<string, unknown>>>): Promise<{ fx: GatewayFixture; upstream: UpstreamExec; agent: Caller; close(): Promise<void> }> {
  const fx = await startDemoGateway({
    store: kind,
    upstream: kind,
    count: 10,
    edit: (config) => {
      for (const [name, resource] of Object.entries(resources)) config.resources[name] = resource(config)
    },
  })
  const upstream = await openUpstream(fx.upstreamUrl)
  const token = (await fx.gateway.principals.issue({ name: agentName, role: 'agent', scopes: { resources: Object.keys(resources), actions: '*' } })).token
  return {
    fx,
    upstream,
    agent: caller(fx.base, token),
    async close() {
      await upstream.close()
      await fx.close()
    },
  }
}
