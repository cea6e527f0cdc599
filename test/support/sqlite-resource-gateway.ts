import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { parseConfig, resolvePaths } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { type GatewayFixture, startDemoGateway } from './gateway-fixture.js'
import { createTempDir } from './stores.js'

/**
 * A demo gateway (SQLite store, not served) with one more `sql` resource over a SQLite file of the test's own making
 * (`setup` creates its tables), and `reopened`: a second gateway on the same store and config with that resource's
 * config edited, as a restart on an edited config would be. Close what `reopened` gives before `close`.
 *
 * @example const fx = await sqliteResourceGateway('ledger', (db) => db.exec('create table …'), (file) => ({ … }))
 */
export async function sqliteResourceGateway(name: string, setup: (db: BetterSqlite3.Database) => void, resource: (url: string) => Record<string, unknown>) {
  const dir = await createTempDir(`warrant-${name}-`)
  const file = join(dir.path, `${name}.db`)
  const db = new BetterSqlite3(file)
  setup(db)
  db.close()
  let raw: Record<string, any> = {}
  const fx: GatewayFixture = await startDemoGateway({
    store: 'sqlite',
    count: 10,
    serve: false,
    edit: (config) => {
      config.resources[name] = resource(`sqlite:${file}`)
      raw = structuredClone(config)
    },
  })
  return {
    fx,
    file,
    /** A gateway on the same store whose resource's config `edit` changed. Two gateways on one SQLite file take turns: this one's audit rows are appended first. */
    async reopened(edit: (resource: Record<string, any>) => void): Promise<Gateway> {
      const edited = structuredClone(raw)
      edit(edited.resources[name])
      await fx.gateway.audit.flush()
      return openGateway({ config: resolvePaths(parseConfig(edited, 'edited config'), fx.dir), log: createLogger({ level: 'silent' }) })
    },
    async close() {
      await fx.close()
      await dir.drop()
    },
  }
}
