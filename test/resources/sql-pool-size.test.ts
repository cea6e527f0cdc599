import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { parseConfig } from '../../src/config/index.js'
import { createCatalogue } from '../../src/resources/index.js'
import { createTestPostgresDatabase } from '../support/stores.js'

const CONCURRENCY = 16

/** Connections of the connector that wait on a lock in this database, as PostgreSQL sees them. */
async function waiting(admin: pg.Client, database: string): Promise<number> {
  const result = await admin.query(
    `select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'warrant' and wait_event_type = 'Lock'`,
    [database],
  )
  return result.rows[0].n as number
}

describe('a PostgreSQL sql resource sizes its pool from execution.concurrency', () => {
  it(`${CONCURRENCY} writes at once hold ${CONCURRENCY} connections (the fixed pool of 5 held 5), and all land`, { timeout: 60_000 }, async () => {
    const database = await createTestPostgresDatabase()
    const admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    const catalogue = createCatalogue({
      config: parseConfig({
        execution: { concurrency: CONCURRENCY },
        resources: {
          items: {
            environment: { name: 'test' },
            connector: { kind: 'sql', url: database.url, table: 'items' },
            fields: { id: 'string', state: 'string', version: 'integer' },
            version_field: 'version',
            review_fields: ['id', 'state'],
          },
        },
      }),
    })
    const locker = new pg.Client({ connectionString: database.url })
    try {
      await admin.query(`create table items (id text primary key, state text not null, version integer not null)`)
      await admin.query(`insert into items select 'i' || lpad(g::text, 3, '0'), 'new', 1 from generate_series(1, ${CONCURRENCY}) g`)
      const name = new URL(database.url).pathname.slice(1)
      await locker.connect()
      await locker.query('begin')
      await locker.query('lock table items in exclusive mode')
      const connector = catalogue.get('items').connector
      const writes = Array.from({ length: CONCURRENCY }, (_, i) =>
        connector.write({ id: `i${String(i + 1).padStart(3, '0')}`, expectedVersion: '1', set: { state: 'done' }, precondition: {} }),
      )
      let most = 0
      // up to 30 s on a busy machine; it stops as soon as every write waits
      for (let tries = 0; tries < 1200 && most < CONCURRENCY; tries++) {
        most = Math.max(most, await waiting(admin, name))
        await new Promise((r) => setTimeout(r, 25))
      }
      await locker.query('commit')
      const outcomes = await Promise.all(writes)
      assert.equal(most, CONCURRENCY, `at most ${most} writes were waiting on the database at once`)
      assert.deepEqual(outcomes.map((o) => o.kind), Array(CONCURRENCY).fill('written'))
      assert.equal((await admin.query(`select count(*)::int as n from items where state = 'done' and version = 2`)).rows[0].n, CONCURRENCY)
    } finally {
      await locker.end().catch(() => undefined)
      await catalogue.close()
      await admin.end()
      await database.drop()
    }
  })
})
