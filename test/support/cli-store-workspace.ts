import { createCliWorkspace } from './cli-config.js'
import { createTestPostgresDatabase, type StoreKind, type TestDatabase } from './stores.js'

/**
 * A CLI workspace whose store is of `kind`: its own SQLite file, or a fresh PostgreSQL database. `storeUrl` opens the
 * same store from the test; `drop()` removes both.
 */
export async function createCliWorkspaceOn(kind: StoreKind, options: { readonly count?: number } = {}) {
  const pgDb: TestDatabase | null = kind === 'postgres' ? await createTestPostgresDatabase() : null
  const ws = await createCliWorkspace({
    ...(options.count === undefined ? {} : { count: options.count }),
    edit: (raw) => {
      if (pgDb) raw.store = pgDb.url
    },
  }).catch(async (error: unknown) => {
    await pgDb?.drop()
    throw error
  })
  return {
    ws,
    storeUrl: pgDb ? pgDb.url : `sqlite:${ws.dir}/warrant.db`,
    drop: async () => {
      await ws.drop()
      await pgDb?.drop()
    },
  }
}
