import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { resourceSchema } from '../../src/config/index.js'
import { decide, type Envelope } from '../../src/contract/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { searchAll, type WalkedRecord } from '../../src/inventory/index.js'
import { createTempDir, createTestPostgresDatabase } from '../support/stores.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

// A sql walk continued over several calls reads a new snapshot in each, so it is not one consistent snapshot.
// Its keyset positions (strictly after the last id) still prove that every row that existed for the whole walk
// was read: decide() proves absence from it, and rows written between the parts never come back twice.

const CREATE = 'create table subs (id text primary key, status text not null, version integer not null)'
const resource = (url: string) =>
  resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table: 'subs', source: 'subs-db' },
    fields: { id: 'string', status: 'string', version: 'integer' },
    version_field: 'version',
    review_fields: ['id', 'status'],
  })
const idOf = (n: number) => `s${String(n).padStart(3, '0')}`

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`sql walk continued across parts while rows are written (${kind})`, () => {
    let connector: SqlConnector
    let exec: (statement: string, params: unknown[]) => Promise<void>
    let drop: () => Promise<void>
    before(async () => {
      if (kind === 'sqlite') {
        const dir = await createTempDir('warrant-sql-continuation-')
        const file = join(dir.path, 'upstream.db')
        const db = new BetterSqlite3(file)
        db.pragma('journal_mode = WAL')
        db.exec(CREATE)
        exec = async (statement, params) => void db.prepare(statement).run(...params)
        connector = createSqlConnector({ resource: resource(`sqlite:${file}`) })
        drop = async () => {
          db.close()
          await dir.drop()
        }
      } else {
        const database = await createTestPostgresDatabase()
        const client = new pg.Client({ connectionString: database.url })
        await client.connect()
        await client.query(CREATE)
        let n = 0
        exec = async (statement, params) => void (await client.query(statement.replace(/\?/g, () => `$${++n}`), params).finally(() => (n = 0)))
        connector = createSqlConnector({ resource: resource(database.url) })
        drop = async () => {
          await client.end()
          await database.drop()
        }
      }
      for (let i = 0; i < 20; i++) await exec('insert into subs (id, status, version) values (?, ?, ?)', [idOf(i * 10), 'active', 1])
    })
    after(async () => {
      await connector?.close()
      await drop?.()
    })

    it('rows deleted and inserted behind the cursor between parts: complete, stability proven, every row that stayed is there once', async () => {
      const codec = testCodec()
      const parts: Envelope<WalkedRecord>[] = []
      let cursor: string | null = null
      for (let call = 0; call < 20; call++) {
        const part = await searchAll(connector, { resource: 'subs', filter: {}, pageSize: 3, cursor }, { maxPages: 1 }, { scope: TEST_SCOPE, cursorCodec: codec })
        parts.push(part)
        const c = part.continuation
        cursor = c?.kind === 'next_cursor' ? c.cursor : null
        if (cursor === null) break
        // between parts: one row already read goes away, one appears before the cursor, one after it
        if (call === 1) {
          await exec('delete from subs where id = ?', [idOf(0)])
          await exec('insert into subs (id, status, version) values (?, ?, ?)', [idOf(5), 'active', 1])
          await exec('insert into subs (id, status, version) values (?, ?, ?)', [idOf(195), 'active', 1])
        }
      }
      const last = parts.at(-1)!
      assert.ok(parts.length > 3)
      assert.equal(last.complete, true, JSON.stringify(last.incomplete_reasons))
      assert.equal(last.scope.consistent_snapshot, false, 'each part read its own snapshot')
      assert.equal(last.scope.stability, 'proven')
      assert.equal(decide(last, 'prove_absence').decision, 'proceed')
      const ids = parts.flatMap((p) => p.items.map((i) => i.id))
      assert.equal(new Set(ids).size, ids.length, 'no id twice')
      for (let i = 1; i < 20; i++) assert.ok(ids.includes(idOf(i * 10)), idOf(i * 10))
      assert.ok(ids.includes(idOf(195)), 'a row inserted ahead of the cursor is read')
    })
  })
}
