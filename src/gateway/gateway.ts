import { randomBytes } from 'node:crypto'
import type { WarrantConfig } from '../config/index.js'
import type { UpstreamCall } from '../connectors/index.js'
import { createPrincipalStore, type PrincipalStore } from '../auth/index.js'
import { createCursorCodec, type CursorCodec } from '../inventory/index.js'
import { createCatalogue, type Catalogue } from '../resources/index.js'
import { createStore, type Store } from '../store/index.js'
import { createLogger, type Logger } from './logger.js'

/** The assembled gateway that every surface calls: store, resources and the shared services. */
export interface Gateway {
  readonly config: WarrantConfig
  readonly store: Store
  readonly catalogue: Catalogue
  readonly cursorCodec: CursorCodec
  readonly principals: PrincipalStore
  readonly log: Logger
  close(): Promise<void>
}

export interface GatewayOptions {
  readonly config: WarrantConfig
  readonly log?: Logger
  readonly env?: NodeJS.ProcessEnv
  /** Receives every upstream call (the audit log subscribes). */
  readonly onCall?: (call: UpstreamCall) => void
}

/**
 * Opens the store (migrating it), builds the resources' connectors, and loads the cursor-signing key, which
 * lives in the store so cursors survive a restart and verify on every instance sharing the database.
 *
 * @example const gateway = await openGateway({ config: loadConfigFile('config/demo.yaml') })
 */
export async function openGateway(options: GatewayOptions): Promise<Gateway> {
  const log = options.log ?? createLogger()
  const store = await createStore({ url: options.config.store, log })
  try {
    const outcome = await store.migrate()
    if (outcome.error) throw new Error(`store migration failed: ${outcome.error.message}`)
    const key = await signingKey(store)
    const catalogue = createCatalogue({ config: options.config, env: options.env, onCall: options.onCall })
    return {
      config: options.config,
      store,
      catalogue,
      cursorCodec: createCursorCodec({ key }),
      principals: createPrincipalStore(store),
      log,
      async close() {
        await catalogue.close()
        await store.close()
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}

async function signingKey(store: Store): Promise<string> {
  await store.db
    .insertInto('kv')
    .values({ key: 'cursor_signing_key', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute()
  const row = await store.db.selectFrom('kv').select('value').where('key', '=', 'cursor_signing_key').executeTakeFirstOrThrow()
  return row.value
}
