import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { createStore, maskPassword } from '../../src/store/index.js'
import type { Store, StoreDialect, StoreOptions } from '../../src/store/index.js'

const ALL_STORE_KINDS = ['sqlite', 'postgres'] as const satisfies readonly StoreDialect[]
export type StoreKind = (typeof ALL_STORE_KINDS)[number]
/**
 * Every database suite runs once per kind: `for (const kind of STORE_KINDS) describe(kind, ...)`.
 * WARRANT_TEST_STORE=sqlite (or postgres) keeps one kind: the mutation run (`npm run mutants`) uses it, since
 * the guards it mutates do not depend on the store. `npm test` always runs both.
 */
export const STORE_KINDS: readonly StoreKind[] = ALL_STORE_KINDS.filter((kind) => !process.env.WARRANT_TEST_STORE || kind === process.env.WARRANT_TEST_STORE)

/**
 * The server test databases are created on. Its user must be allowed to CREATE DATABASE.
 * Override with WARRANT_TEST_POSTGRES_URL (CI, another port).
 */
export const TEST_POSTGRES_ADMIN_URL = process.env.WARRANT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export interface TestStore {
  readonly store: Store
  readonly url: string
  /** close the store and delete its database or folder; safe to call twice */
  drop(): Promise<void>
}

export interface TestStoreOptions {
  /** run the migrations before returning; default true */
  readonly migrate?: boolean
  readonly clock?: StoreOptions['clock']
  readonly log?: StoreOptions['log']
}

export interface TestDatabase {
  readonly url: string
  drop(): Promise<void>
}

export interface TempDir {
  readonly path: string
  drop(): Promise<void>
}

/**
 * A store on a fresh, private database: a new SQLite file in its own temp folder, or a new PostgreSQL
 * database on the test server. Migrated unless `migrate: false`.
 *
 * @example
 * for (const kind of STORE_KINDS) describe(kind, () => {
 *   it('works', async () => {
 *     const { store, drop } = await createTestStore(kind)
 *     try { ... } finally { await drop() }
 *   })
 * })
 */
export async function createTestStore(kind: StoreKind, options: TestStoreOptions = {}): Promise<TestStore> {
  const target = kind === 'sqlite' ? await createTestSqliteFile() : await createTestPostgresDatabase()
  let store: Store
  try {
    store = await createStore({ url: target.url, clock: options.clock, log: options.log })
  } catch (error) {
    await target.drop()
    throw error
  }
  const drop = once(async () => {
    await store.close()
    await target.drop()
  })
  if (options.migrate ?? true) {
    const { error } = await store.migrate()
    if (error) {
      await drop()
      throw new Error(`test store (${kind}) did not migrate: ${error.message}`, { cause: error.cause })
    }
  }
  return { store, url: target.url, drop }
}

/**
 * A new, empty PostgreSQL database on the test server, e.g. to stand in for an upstream table.
 * `drop()` removes it even if connections are still open.
 */
export async function createTestPostgresDatabase(): Promise<TestDatabase> {
  const name = `warrant_test_${randomBytes(6).toString('hex')}`
  await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(TEST_POSTGRES_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    // FORCE ends sessions a failing test left open, which would otherwise make DROP wait or fail.
    drop: once(() => withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  }
}

/**
 * The MySQL/MariaDB server test upstreams are created on (root may CREATE DATABASE). Override with
 * WARRANT_TEST_MYSQL_URL.
 */
export const TEST_MYSQL_ADMIN_URL = process.env.WARRANT_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/mysql'

/**
 * A new, empty MySQL/MariaDB database on the test server, to stand in for an upstream table. `drop()` ends
 * the connections still using it (a left-open transaction would make DROP wait) and removes it.
 */
export async function createTestMysqlDatabase(): Promise<TestDatabase> {
  const name = `warrant_test_${randomBytes(6).toString('hex')}`
  await withMysqlAdmin((conn) => conn.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`))
  const url = new URL(TEST_MYSQL_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: once(() =>
      withMysqlAdmin(async (conn) => {
        const [rows] = await conn.query('SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()', [name])
        for (const { id } of rows as { id: number }[]) await conn.query(`KILL ${Number(id)}`).catch(() => undefined)
        await conn.query(`DROP DATABASE IF EXISTS ${name}`)
      }),
    ),
  }
}

async function withMysqlAdmin(work: (conn: mysql.Connection) => Promise<unknown>): Promise<void> {
  const url = new URL(TEST_MYSQL_ADMIN_URL)
  let conn: mysql.Connection
  try {
    conn = await mysql.createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username) || 'root',
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1) || undefined,
    })
  } catch (cause) {
    throw new Error(
      `test MySQL/MariaDB server is not reachable at ${maskPassword(TEST_MYSQL_ADMIN_URL)}; start it with ` +
        '`start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd` or set WARRANT_TEST_MYSQL_URL',
      { cause },
    )
  }
  try {
    await work(conn)
  } finally {
    await conn.end()
  }
}

/** A new folder under the OS temp folder; `drop()` deletes it and everything in it. */
export async function createTempDir(prefix = 'warrant-test-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix))
  return { path, drop: once(() => rm(path, { recursive: true, force: true })) }
}

async function createTestSqliteFile(): Promise<TestDatabase> {
  const dir = await createTempDir()
  return { url: `sqlite:${join(dir.path, 'warrant.db')}`, drop: dir.drop }
}

async function withAdminClient(work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
  try {
    await client.connect()
  } catch (cause) {
    throw new Error(
      `test PostgreSQL server is not reachable at ${maskPassword(TEST_POSTGRES_ADMIN_URL)}; start it with ` +
        '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` or set WARRANT_TEST_POSTGRES_URL',
      { cause },
    )
  }
  try {
    await work(client)
  } finally {
    await client.end()
  }
}

function once(action: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => (done ??= action().then(() => undefined))
}
