import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { resourceSchema } from '../../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import { createTestPostgresDatabase, type TestDatabase } from '../../support/stores.js'

/** Ids past 2^53: a JavaScript number cannot hold them, so the walk must keep them as the text PostgreSQL sent. */
const IDS = ['9007199254740993', '9007199254740994', '9007199254740995', '9223372036854775806', '9223372036854775807']

/**
 * A PostgreSQL table keyed by bigint (not the demo's text ids): a page's next position comes from the id as
 * stored, before its row becomes a record whose integer field is a (rounded) number. A position taken from the
 * rounded value would start the next page before the last id read, and the walk would repeat a record.
 */
describe('sql connector on PostgreSQL: bigint ids past 2^53', () => {
  let db: TestDatabase
  let connector: SqlConnector
  before(async () => {
    db = await createTestPostgresDatabase()
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    try {
      await client.query('create table ledger (id bigint primary key, version integer not null, name text)')
      for (const id of IDS) await client.query('insert into ledger (id, version, name) values ($1, 1, $2)', [id, `n${id.slice(-2)}`])
    } finally {
      await client.end()
    }
    connector = createSqlConnector({
      resource: resourceSchema.parse({
        environment: { name: 'test' },
        connector: { kind: 'sql', url: db.url, table: 'ledger', source: 'ledger-db' },
        fields: { id: 'integer', version: 'integer', name: 'string' },
        id_field: 'id',
        version_field: 'version',
        review_fields: ['id', 'name'],
      }),
    })
  })
  after(async () => {
    await connector?.close()
    await db?.drop()
  })

  for (const pageSize of [1, 2, 3]) {
    it(`pages of ${pageSize}: every id once, exactly as stored, in order`, async () => {
      const session = await connector.openSession()
      const ids: string[] = []
      try {
        let position: string | null = null
        for (let page = 0; page < 20; page++) {
          const result = await session.readPage({ source: 'ledger-db', filter: {}, position, pageSize })
          assert.equal(result.kind, 'page', JSON.stringify(result))
          if (result.kind !== 'page') return
          ids.push(...result.items.map((r) => r.id))
          for (const r of result.items) assert.equal(r.fields.name, `n${r.id.slice(-2)}`, 'the record is the row of its id')
          if (result.next === null) break
          position = result.next
        }
      } finally {
        await session.close()
      }
      assert.deepEqual(ids, IDS)
    })
  }
})
