import assert from 'node:assert/strict'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { resourceSchema } from '../../../../src/config/index.js'
import { createSqlConnector, type SqlConnector, type SqlConnectorOptions } from '../../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../../src/inventory/index.js'
import type { Filter } from '../../../../src/contract/index.js'
import { createTempDir, createTestMysqlDatabase, createTestPostgresDatabase } from '../../../support/stores.js'

export type Kind = 'sqlite' | 'postgres' | 'mysql'

/** A fresh database of one engine, reached over its own connection, and connectors to its tables (closed on drop). */
export interface Engine {
  readonly url: string
  exec(statement: string): Promise<void>
  rows(statement: string): Promise<Record<string, unknown>[]>
  connector(table: string, fields: Record<string, string>, more?: Record<string, unknown>, options?: Partial<SqlConnectorOptions>): SqlConnector
  drop(): Promise<void>
}

export async function createEngine(kind: Kind): Promise<Engine> {
  const connectors: SqlConnector[] = []
  const connectorOf = (url: string) => (table: string, fields: Record<string, string>, more: Record<string, unknown> = {}, options: Partial<SqlConnectorOptions> = {}) => {
    const resource = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url, table, source: 'things-db' },
      fields,
      version_field: 'version',
      review_fields: ['id'],
      ...more,
    })
    const c = createSqlConnector({ ...options, resource })
    connectors.push(c)
    return c
  }
  const closeAll = () => Promise.all(connectors.map((c) => c.close()))
  if (kind === 'sqlite') {
    const dir = await createTempDir('warrant-sql-engine-')
    const file = join(dir.path, 'upstream.db')
    const db = new BetterSqlite3(file)
    db.pragma('journal_mode = WAL')
    return {
      url: `sqlite:${file}`,
      exec: async (s) => void db.exec(s),
      rows: async (s) => db.prepare(s).all() as Record<string, unknown>[],
      connector: connectorOf(`sqlite:${file}`),
      drop: async () => {
        await closeAll()
        db.close()
        await dir.drop()
      },
    }
  }
  if (kind === 'postgres') {
    const database = await createTestPostgresDatabase()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    return {
      url: database.url,
      exec: async (s) => void (await client.query(s)),
      rows: async (s) => (await client.query(s)).rows,
      connector: connectorOf(database.url),
      drop: async () => {
        await closeAll()
        await client.end()
        await database.drop()
      },
    }
  }
  const database = await createTestMysqlDatabase()
  const url = new URL(database.url)
  const conn = await mysql.createConnection({ host: url.hostname, port: Number(url.port), user: url.username, database: url.pathname.slice(1), timezone: 'Z', multipleStatements: true })
  await conn.query("SET time_zone = '+00:00'")
  return {
    url: database.url,
    exec: async (s) => void (await conn.query(s)),
    rows: async (s) => (await conn.query(s))[0] as Record<string, unknown>[],
    connector: connectorOf(database.url),
    drop: async () => {
      await closeAll()
      await conn.end()
      await database.drop()
    },
  }
}

export function search(connector: SqlConnector, filter: Filter, pageSize: number) {
  return searchAll(
    connector,
    { resource: 'things', filter, pageSize },
    {},
    { scope: { resource: 'things', environment: 'test', visibility: 'all', restricted: false }, cursorCodec: createCursorCodec({ key: 'k'.repeat(32) }) },
  )
}

/** A search of `filter` in pages of `pageSize` answers exactly the records `ids`, in id order, and says complete. */
export async function assertCompleteSearch(connector: SqlConnector, filter: Filter, ids: readonly string[], pageSize = 2): Promise<void> {
  const envelope = await search(connector, filter, pageSize)
  assert.deepEqual(envelope.items.map((i) => i.id), ids, JSON.stringify(envelope.incomplete_reasons))
  assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
}
