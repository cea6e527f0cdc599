import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { createTempDir, createTestMysqlDatabase, createTestPostgresDatabase } from '../../../support/stores.js'
import { resourceSchema, type FieldType, type ResourceConfig } from '../../../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../../../src/connectors/sql/index.js'

/** Every engine the sql connector suites run on. */
export const SQL_KINDS = ['sqlite', 'postgres', 'mysql'] as const
export type Kind = (typeof SQL_KINDS)[number]

/** A test row in its JavaScript shape: what the connector must return as `fields`. */
export interface Row {
  id: string
  name: string | null
  n: number | null
  k: number | null
  flag: boolean | null
  tags: string[] | null
  at: string | null
  version: number
  updated_at: string
  secret: string
}

/** The upstream table, reached over its own connection (not the connector's). */
export interface Upstream {
  readonly url: string
  exec(statement: string, params?: unknown[]): Promise<void>
  count(): Promise<number>
  reset(rows: readonly Row[]): Promise<void>
  drop(): Promise<void>
}

export async function createUpstream(kind: Kind): Promise<Upstream> {
  if (kind === 'sqlite') {
    const dir = await createTempDir('warrant-sql-connector-')
    const file = join(dir.path, 'upstream.db')
    const db = new BetterSqlite3(file)
    db.pragma('journal_mode = WAL')
    db.exec(`create table things (
      id text primary key, name text, n real, k integer check (k is null or k > -1000), flag integer, tags text, at text,
      version integer not null, updated_at text not null, secret text not null)`)
    const insert = db.prepare('insert into things values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
    return {
      url: `sqlite:${file}`,
      exec: async (statement, params = []) => void db.prepare(statement).run(...params),
      count: async () => (db.prepare('select count(*) as c from things').get() as { c: number }).c,
      reset: async (rows) =>
        db.transaction(() => {
          db.exec('delete from things')
          for (const r of rows) insert.run(r.id, r.name, r.n, r.k, r.flag === null ? null : r.flag ? 1 : 0, r.tags && JSON.stringify(r.tags), r.at, r.version, r.updated_at, r.secret)
        })(),
      drop: async () => {
        db.close()
        await dir.drop()
      },
    }
  }
  if (kind === 'mysql') return createMysqlUpstream()
  const database = await createTestPostgresDatabase()
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  await client.query(`create table things (
    id text collate "C" primary key, name text collate "en-x-icu", n double precision, k integer check (k is null or k > -1000), flag boolean, tags text,
    at timestamptz, version integer not null, updated_at timestamptz not null, secret text not null)`)
  return {
    url: database.url,
    exec: async (statement, params = []) => void (await client.query(statement.replace(/\?/g, (() => { let i = 0; return () => `$${++i}` })()), params)),
    count: async () => Number((await client.query('select count(*) as c from things')).rows[0].c),
    reset: async (rows) => {
      await client.query('begin')
      await client.query('delete from things')
      for (const r of rows) {
        await client.query('insert into things values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)', [
          r.id, r.name, r.n, r.k, r.flag, r.tags && JSON.stringify(r.tags), r.at, r.version, r.updated_at, r.secret,
        ])
      }
      await client.query('commit')
    },
    drop: async () => {
      await client.end()
      await database.drop()
    },
  }
}


const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

/** MySQL reads no ISO `Z`; a DATETIME literal in UTC keeps every digit the test wrote. */
export function mysqlParam(value: unknown): unknown {
  return typeof value === 'string' && ISO.test(value) ? value.slice(0, -1).replace('T', ' ') : value
}

/**
 * The same table on MariaDB: a binary-collated id (code-point order, as PostgreSQL's "C"), and a name in a
 * case- and accent-insensitive collation, so string filters must not lean on the column's collation.
 */
async function createMysqlUpstream(): Promise<Upstream> {
  const database = await createTestMysqlDatabase()
  const url = new URL(database.url)
  const conn = await mysql.createConnection({ host: url.hostname, port: Number(url.port), user: url.username, database: url.pathname.slice(1), timezone: 'Z' })
  await conn.query("SET time_zone = '+00:00'")
  await conn.query(`create table things (
    id varchar(64) collate utf8mb4_bin primary key, name varchar(255) collate utf8mb4_unicode_ci, n double, k integer check (k is null or k > -1000),
    flag boolean, tags text, at datetime(3), version integer not null, updated_at datetime(3) not null, secret varchar(255) not null
  ) engine = InnoDB default charset = utf8mb4`)
  return {
    url: database.url,
    exec: async (statement, params = []) => void (await conn.query(statement, params.map(mysqlParam))),
    count: async () => Number(((await conn.query('select count(*) as c from things'))[0] as { c: number }[])[0]!.c),
    reset: async (rows) => {
      await conn.beginTransaction()
      await conn.query('delete from things')
      for (const r of rows) {
        await conn.query('insert into things values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
          r.id, r.name, r.n, r.k, r.flag, r.tags && JSON.stringify(r.tags), mysqlParam(r.at), r.version, mysqlParam(r.updated_at), r.secret,
        ].map((v) => (v === undefined ? null : v)))
      }
      await conn.commit()
    },
    drop: async () => {
      await conn.end()
      await database.drop()
    },
  }
}

/**
 * A connector to a table `ledger` (source `ledger-db`) of an upstream a test shaped itself: `id` and `version`
 * columns and whatever else `fields` declares, the first non-key field shown for review.
 */
export function ledgerConnector(url: string, fields: Readonly<Record<string, FieldType>>): SqlConnector {
  return createSqlConnector({ resource: ledgerResource(url, fields) })
}

/** The resource `ledgerConnector` reads: table `ledger`, keyed by `id`, versioned by `version`. */
export function ledgerResource(url: string, fields: Readonly<Record<string, FieldType>>): ResourceConfig {
  const shown = Object.keys(fields).find((f) => f !== 'id' && f !== 'version') ?? 'id'
  return resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table: 'ledger', source: 'ledger-db' },
    fields,
    id_field: 'id',
    version_field: 'version',
    review_fields: ['id', shown],
  })
}

/** The columns of `createUpstream`'s table `things`, as a resource declares them. */
export const THINGS_FIELDS = { id: 'string', name: 'string', n: 'number', k: 'integer', flag: 'boolean', tags: 'tags', at: 'timestamp', version: 'integer', updated_at: 'timestamp', secret: 'string' } as const

/** A resource over `createUpstream`'s table `things` (source `things-db`) at `url`. */
export function thingsResource(url: string): ResourceConfig {
  return resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table: 'things', source: 'things-db' },
    fields: THINGS_FIELDS,
    version_field: 'version',
    review_fields: ['id'],
  })
}

/**
 * A resource over `table` at `url` (source `source`) keyed by `id`, versioned by `version`, showing `id` and `status`,
 * with one action `pause` (status to paused): what the version-column suites write through and `warrant check` reads.
 */
export function pausableResource(url: string, table: string, source: string, fields: Readonly<Record<string, FieldType>>): ResourceConfig {
  return resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table, source },
    fields,
    version_field: 'version',
    review_fields: ['id', 'status'],
    actions: { pause: { set: { status: 'paused' } } },
  })
}
