import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { resourceSchema } from '../../../src/config/index.js'
import { decide } from '../../../src/contract/index.js'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createTempDir, createTestPostgresDatabase } from '../../support/stores.js'

// A sql resource whose config declares a column the table does not have (it is called `state` there). The
// walk must not be complete, and the reason must name the column and the fix, never look like an outage.
const CREATE = 'create table subs (id text primary key, state text, version integer not null)'
const resource = (url: string) =>
  resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table: 'subs', source: 'subs-db' },
    fields: { id: 'string', status: 'string', version: 'integer' },
    version_field: 'version',
    review_fields: ['id', 'status'],
  })

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`sql: a declared column the table lacks (${kind})`, () => {
    let connector: SqlConnector
    let drop: () => Promise<void>
    before(async () => {
      if (kind === 'sqlite') {
        const dir = await createTempDir('warrant-sql-missing-column-')
        const file = join(dir.path, 'upstream.db')
        const db = new BetterSqlite3(file)
        db.exec(CREATE)
        db.exec("insert into subs values ('a', 'past_due', 1)")
        db.close()
        connector = createSqlConnector({ resource: resource(`sqlite:${file}`) })
        drop = () => dir.drop()
      } else {
        const database = await createTestPostgresDatabase()
        const client = new pg.Client({ connectionString: database.url })
        await client.connect()
        await client.query(CREATE)
        await client.query("insert into subs values ('a', 'past_due', 1)")
        await client.end()
        connector = createSqlConnector({ resource: resource(database.url) })
        drop = () => database.drop()
      }
    })
    after(async () => {
      await connector?.close()
      await drop?.()
    })

    it('a search is not complete, and its reason names the column and the fix', async () => {
      const envelope = await searchAll(
        connector,
        { resource: 'subs', filter: { status: 'past_due' } },
        {},
        { scope: { resource: 'subs', environment: 'test', visibility: 'all', restricted: false }, cursorCodec: createCursorCodec({ key: 'k'.repeat(32) }) },
      )
      assert.equal(envelope.complete, false)
      assert.deepEqual(envelope.items, [])
      assert.match(envelope.incomplete_reasons[0]?.message ?? '', /no column "status", which the resource declares in fields; the config does not match the table/)
      // the same statement would fail the same way: permanent, so no continuation sends it again, and no wait helps
      assert.equal(envelope.incomplete_reasons[0]?.code, 'SOURCE_UNAVAILABLE')
      assert.equal(envelope.incomplete_reasons[0]?.retry_after_seconds, undefined)
      assert.equal(envelope.continuation, null)
      assert.equal(decide(envelope, 'prove_absence').decision, 'refuse_or_request_review')
    })

    it('a read by id fails with the same explanation', async () => {
      const result = await connector.readByIds(['a'])
      assert.equal(result.records.size, 0)
      assert.match(result.failed[0]?.message ?? '', /no column "status"/)
    })
  })
}
