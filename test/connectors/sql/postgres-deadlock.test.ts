import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { resourceSchema } from '../../../src/config/index.js'
import { createSqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, type Row, type Upstream } from './support/upstream.js'

/**
 * The same fault as on MariaDB, on PostgreSQL: a deadlock rolls the connector's UPDATE back, and the outcome
 * is retried (rate_limited), never a failure to give up on and never a success.
 */
describe('sql connector on PostgreSQL: a deadlock is retried', () => {
  let upstream: Upstream
  let other: pg.Client
  before(async () => {
    upstream = await createUpstream('postgres')
    other = new pg.Client({ connectionString: upstream.url })
    await other.connect()
  })
  after(async () => {
    await other?.end()
    await upstream?.drop()
  })

  it('the UPDATE that waits first is the victim: rate_limited, nothing written', async () => {
    const rows: Row[] = [1, 2].map((i) => ({ id: `row_${i}`, name: 'before', n: 1, k: 1, flag: true, tags: [], at: null, version: 1, updated_at: '2024-01-01T00:00:00.000Z', secret: 's' }))
    await upstream.reset(rows)
    await upstream.exec('create table counters (id integer primary key, n integer not null)')
    await upstream.exec('insert into counters values (1, 0)')
    await upstream.exec('create function touch() returns trigger language plpgsql as $$ begin update counters set n = n + 1 where id = 1; return new; end $$')
    await upstream.exec('create trigger things_touch before update on things for each row execute function touch()')
    const connector = createSqlConnector({
      resource: resourceSchema.parse({
        environment: { name: 'test' },
        connector: { kind: 'sql', url: upstream.url, table: 'things', source: 'things-db' },
        fields: { id: 'string', name: 'string', n: 'number', k: 'integer', flag: 'boolean', tags: 'tags', at: 'timestamp', version: 'integer', updated_at: 'timestamp', secret: 'string' },
        version_field: 'version',
        review_fields: ['id'],
      }),
    })
    try {
      await other.query('begin')
      await other.query('update counters set n = n + 1 where id = 1')
      const write = connector.write({ id: 'row_2', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
      // wait until the connector's UPDATE holds row_2 and waits on counter 1 (inside its trigger)
      for (let i = 0; ; i++) {
        // activity is snapshotted once per transaction; this one is open, so drop the snapshot each time
        await other.query('select pg_stat_clear_snapshot()')
        const { rows: waiting } = await other.query("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'update \"things\"%'")
        if (waiting.length > 0) break
        assert.ok(i < 200, 'the connector never waited on the counter')
        await new Promise((r) => setTimeout(r, 50))
      }
      // PostgreSQL checks for a deadlock after deadlock_timeout, in the session that has waited longest: the connector's
      const blocked = other.query("update things set name = 'other' where id = 'row_2'")
      const outcome = await write
      assert.equal(outcome.kind, 'rate_limited', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rate_limited' ? outcome.message : '', /deadlock detected.*nothing was written, retried/s)
      await blocked
      await other.query('rollback')
      const { rows: stored } = await other.query("select name, version from things where id = 'row_2'")
      assert.deepEqual(stored[0], { name: 'before', version: 1 })
    } finally {
      await other.query('rollback').catch(() => undefined)
      await connector.close()
    }
  })
})
