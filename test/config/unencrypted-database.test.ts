import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { parseSqlUrl } from '../../src/connectors/sql/url.js'
import { CompiledQuery } from 'kysely'
import { mysqlBackend } from '../../src/connectors/sql/mysql-backend.js'
import { postgresBackend } from '../../src/connectors/sql/postgres-backend.js'
import { existsSync } from 'node:fs'
import { createCliWorkspace } from '../support/cli-config.js'
import { configProblems, parseConfigInput } from '../support/config-input.js'

// A sql upstream or a PostgreSQL store on a host off this machine, reached without TLS, sends every record (and,
// for some mysql auth plugins, the password) across the network readable, and anything on the path can cut a
// result set the walk then calls complete. Loopback and unix sockets are this machine; anything else must ask the
// driver for TLS in its URL, or say `unencrypted: true` on that connector (or the store) when the network is its own.

function withSqlUrl(url: string, extra: Record<string, unknown> = {}): any {
  const raw = parseConfigInput()
  raw.resources.subscriptions.connector.url = url
  Object.assign(raw.resources.subscriptions.connector, extra)
  return raw
}

function withStore(store: unknown): any {
  const raw = parseConfigInput()
  raw.store = store
  return raw
}

const parse = (raw: unknown) => parseConfig(raw)
const URL_KEY = 'resources.subscriptions.connector.url'

const REFUSED_PG = [
  'postgres://app@db.internal:5432/crm',
  'postgresql://app@10.0.0.7/crm?sslmode=disable',
  'postgres://app@db.internal/crm?ssl=true&sslmode=disable',
  'postgres://app@[2001:db8::1]/crm',
  // the driver takes host= from the query over the URL's host
  'postgres://app@127.0.0.1/crm?host=db.internal',
]
// pg 8 makes TLS a condition for these too, but libpq (and pg 9) falls back to plain: refused by choice
const REFUSED_PG_FALLBACK = ['postgres://app@db.internal/crm?sslmode=prefer', 'postgres://app@db.internal/crm?sslmode=allow']
const ACCEPTED_PG = [
  'postgres://app@127.0.0.1:5432/crm',
  'postgres://app@localhost/crm',
  'postgres://app@[::1]/crm',
  'postgres://app@127.8.9.10/crm',
  'postgres://app@localhost/crm?host=/var/run/postgresql',
  'postgres://app@%2Fvar%2Frun%2Fpostgresql/crm',
  'postgres://app@db.internal/crm?sslmode=require',
  'postgres://app@db.internal/crm?sslmode=verify-ca',
  'postgres://app@db.internal/crm?sslmode=verify-full',
  'postgres://app@db.internal/crm?sslmode=no-verify',
  'postgres://app@db.internal/crm?ssl=true',
]

describe('a database off this machine without TLS is refused unless the config says the network is its own', () => {
  for (const url of [
    ...REFUSED_PG,
    ...REFUSED_PG_FALLBACK,
    'mysql://app@db.internal:3306/shop',
    'mariadb://app@10.1.2.3/shop',
    'mysql://app@db.internal/shop?ssl-mode=DISABLED',
    'mysql://app@[2001:db8::1]/shop',
  ])
    test(`a sql connector at ${url}: refused, naming the url, TLS and unencrypted: true`, () => {
      const [problem] = configProblems(() => parse(withSqlUrl(url)))
      assert.equal(problem?.key, URL_KEY)
      assert.match(problem!.message, /without TLS/)
      assert.match(problem!.message, /unencrypted: true/)
      assert.ok(!problem!.message.includes('s3cret'))
    })

  test('the refusal names the way to TLS of its own driver, and that only verifying the server stops a man in the middle', () => {
    const [pgProblem] = configProblems(() => parse(withSqlUrl('postgres://app:s3cret@db.internal/crm')))
    assert.match(pgProblem!.message, /sslmode=verify-full/)
    assert.ok(!pgProblem!.message.includes('s3cret'), 'the password is not quoted')
    const [mysqlProblem] = configProblems(() => parse(withSqlUrl('mysql://app:s3cret@db.internal/shop')))
    assert.match(mysqlProblem!.message, /ssl-mode=VERIFY_IDENTITY/)
    const [preferProblem] = configProblems(() => parse(withSqlUrl('postgres://app@db.internal/crm?sslmode=prefer')))
    assert.match(preferProblem!.message, /sslmode=prefer lets it be plain/)
    assert.ok(!mysqlProblem!.message.includes('s3cret'), 'the password is not quoted')
  })

  for (const url of [
    ...ACCEPTED_PG,
    'mysql://app@127.0.0.1:3306/shop',
    'mysql://app@localhost/shop',
    'mysql://app@db.internal/shop?ssl-mode=REQUIRED',
    'mysql://app@db.internal/shop?ssl-mode=VERIFY_CA',
    'mysql://app@db.internal/shop?ssl-mode=verify_identity',
  ])
    test(`a sql connector at ${url}: accepted`, () => {
      assert.doesNotThrow(() => parse(withSqlUrl(url)))
    })

  test('unencrypted: true on the connector accepts a database off this machine without TLS', () => {
    assert.doesNotThrow(() => parse(withSqlUrl('postgres://app@db.internal/crm', { unencrypted: true })))
    assert.doesNotThrow(() => parse(withSqlUrl('mysql://app@db.internal/shop', { unencrypted: true })))
  })

  test('a PostgreSQL store off this machine without TLS: refused naming store.url; TLS asked, loopback or unencrypted: true accepted', () => {
    for (const store of ['postgres://warrant@db.internal/warrant', { url: 'postgresql://warrant@10.0.0.9:5432/warrant?sslmode=disable' }]) {
      const [problem] = configProblems(() => parse(withStore(store)))
      assert.equal(problem?.key, 'store.url')
      assert.match(problem!.message, /without TLS/)
      assert.match(problem!.message, /unencrypted: true/)
    }
    assert.doesNotThrow(() => parse(withStore({ url: 'postgres://warrant@db.internal/warrant', unencrypted: true })))
    assert.doesNotThrow(() => parse(withStore('postgres://warrant@db.internal/warrant?sslmode=verify-full')))
    assert.doesNotThrow(() => parse(withStore('postgres://warrant@127.0.0.1:5432/warrant')))
    assert.doesNotThrow(() => parse(withStore('sqlite:./warrant.db')))
  })

  test('warrant serve with such a store: exits 2 naming store.url before anything is written (no audit key file)', async () => {
    const ws = await createCliWorkspace({ count: 5, edit: (raw) => (raw.store = { url: 'postgres://warrant@db.invalid:5432/warrant' }) })
    try {
      const result = await ws.warrantWith(['serve', '--port', '0'], {})
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, /store\.url: reaches the database at "db\.invalid", off this machine, without TLS/)
      assert.equal(existsSync(join(ws.dir, 'audit.key')), false, 'the audit key file was written')
    } finally {
      await ws.drop()
    }
  })

  test('unencrypted on a sqlite store is refused: a file crosses no network', () => {
    const [problem] = configProblems(() => parse(withStore({ url: 'sqlite:./warrant.db', unencrypted: true })))
    assert.equal(problem?.key, 'store.unencrypted')
  })
})

describe('the verdict on a postgres URL is the installed pg driver\'s own reading of it', () => {
  // pg's own reader of a connection string (not exported: loaded beside pg's entry point) says where it connects
  // and whether TLS is a condition; a pg upgrade that reads a URL otherwise fails here
  const require = createRequire(import.meta.url)
  const ConnectionParameters = require(join(dirname(require.resolve('pg')), 'connection-parameters.js'))
  const driverReach = (url: string) => {
    const params = new ConnectionParameters({ connectionString: url })
    const host = String(params.host)
    return { local: host.startsWith('/') || ['localhost', '::1'].includes(host) || host.startsWith('127.'), tls: Boolean(params.ssl) }
  }
  test('every URL refused goes off this machine without TLS; every one accepted stays here or uses TLS', () => {
    for (const url of REFUSED_PG) assert.deepEqual(driverReach(url), { local: false, tls: false }, url)
    for (const url of ACCEPTED_PG) {
      const reach = driverReach(url)
      assert.ok(reach.local || reach.tls, url)
    }
  })
})

describe('a mysql URL says what its TLS is, and the driver is asked for it', () => {
  test('ssl-mode is read from the URL; any other query parameter is refused (was: dropped without a word)', () => {
    const location = parseSqlUrl('mysql://app@db.internal/shop?ssl-mode=VERIFY_IDENTITY')
    assert.equal(location.dialect === 'mysql' && location.sslMode, 'VERIFY_IDENTITY')
    assert.throws(() => parseSqlUrl('mysql://app@db.internal/shop?ssl=true'), /query parameter "ssl".*ssl-mode/)
    assert.throws(() => parseSqlUrl('mysql://app@db.internal/shop?ssl-mode=PREFERRED'), /ssl-mode "PREFERRED"/)
  })

  // The test MariaDB and PostgreSQL at 127.0.0.1 have TLS off: a connection that asks for TLS must fail there,
  // never fall back to plain, which proves the URL's request reaches the driver.
  for (const url of ['mysql://root@127.0.0.1:3306/mysql?ssl-mode=REQUIRED', 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=require'])
    test(`${url} to a server without TLS: the connection fails, never plain`, async () => {
      const location = parseSqlUrl(url)
      const backend = location.dialect === 'mysql' ? mysqlBackend(location, {} as any) : location.dialect === 'postgres' ? postgresBackend(location, {} as any) : assert.fail()
      try {
        await assert.rejects(backend.run(CompiledQuery.raw('select 1')), /does not support (SSL|secure)/i)
      } finally {
        await backend.destroy()
      }
    })
})
