import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { checkResource } from '../../../src/checks/index.js'
import { resourceSchema } from '../../../src/config/index.js'
import type { WriteOutcome } from '../../../src/connectors/connector.js'
import { createSqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * PostgreSQL ERRORs that end the connector's UPDATE before it completed: its transaction is aborted, so nothing was
 * written. 57014 (a statement_timeout spent waiting on a row lock another session holds) and 25006 (a database that
 * takes no writes) were `unknown`, as if the write might have landed: a reconcile owed for a write that surely was
 * not made. Each is now failed, naming the SQLSTATE and the fix. At COMMIT the same SQLSTATE proves nothing is claimed: unknown.
 */
const FIELDS = { id: 'string', version: 'integer', name: 'string' }
const WRITE = { id: 'a', expectedVersion: '1', set: { name: 'after' }, precondition: {} }
const messageOf = (outcome: WriteOutcome) => ('message' in outcome ? outcome.message : '')

describe('sql on postgres: a write PostgreSQL cancelled or refused as read-only', () => {
  let engine: Engine
  let other: pg.Client
  before(async () => {
    engine = await createEngine('postgres')
    other = new pg.Client({ connectionString: engine.url })
    await other.connect()
  })
  after(async () => {
    await other?.end()
    await engine?.drop()
  })

  const reset = async (table: string) => {
    await engine.exec(`drop table if exists ${table}`)
    await engine.exec(`create table ${table} (id text primary key, version integer not null, name text)`)
    await engine.exec(`insert into ${table} values ('a', 1, 'before')`)
  }
  const stored = async (table: string) => (await engine.rows(`select version, name from ${table} where id = 'a'`))[0]

  for (const trigger of [false, true])
    it(`a statement_timeout spent waiting on another session's row lock (${trigger ? 'UPDATE, read-back and COMMIT in a transaction' : 'one autocommitted UPDATE'}): rolled_back, naming 57014 and the fix`, async () => {
      const table = trigger ? 'locked_trigger' : 'locked'
      await reset(table)
      if (trigger) {
        await engine.exec(`create or replace function keep() returns trigger language plpgsql as $$ begin return new; end $$`)
        await engine.exec(`create trigger ${table}_keep before update on ${table} for each row execute function keep()`)
      }
      const connector = engine.connector(table, FIELDS, {}, { statementTimeoutMs: 500 })
      await other.query('begin')
      await other.query(`update ${table} set name = 'held' where id = 'a'`)
      try {
        const outcome = await connector.write(WRITE)
        assert.equal(outcome.kind, 'rolled_back', JSON.stringify(outcome))
        assert.match(messageOf(outcome), /statement timeout.*SQLSTATE 57014.*nothing was written.*statement_timeout_ms/s)
      } finally {
        await other.query('rollback')
      }
      assert.deepEqual(await stored(table), { version: 1, name: 'before' })
    })

  it('a database set default_transaction_read_only: refused (unauthorized, which halts), naming 25006 and the fix; nothing written', async () => {
    await reset('readonly')
    const database = new URL(engine.url).pathname.slice(1)
    await engine.exec(`alter database "${database}" set default_transaction_read_only = on`)
    try {
      const connector = engine.connector('readonly', FIELDS)
      const outcome = await connector.write(WRITE)
      assert.equal(outcome.kind, 'unauthorized', JSON.stringify(outcome))
      assert.match(messageOf(outcome), /read-only transaction.*SQLSTATE 25006.*nothing was written.*default_transaction_read_only off/s)
    } finally {
      await engine.exec(`alter database "${database}" reset default_transaction_read_only`)
    }
    assert.deepEqual(await stored('readonly'), { version: 1, name: 'before' })
  })

  it("warrant check on a database set default_transaction_read_only: conditional_writes does not hold, naming the setting and the fix", async () => {
    await reset('readonly')
    const database = new URL(engine.url).pathname.slice(1)
    const config = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: engine.url, table: 'readonly', source: 'things-db' },
      fields: FIELDS,
      version_field: 'version',
      review_fields: ['id'],
      actions: { rename: { set: { name: 'x' } } },
    })
    await engine.exec(`alter database "${database}" set default_transaction_read_only = on`)
    const connector = createSqlConnector({ resource: config })
    try {
      const writes = (await checkResource({ name: 'readonly', config, connector })).guarantees.find((g) => g.name === 'conditional_writes')
      assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
      assert.match(writes.detail, /takes no writes.*default_transaction_read_only is on.*SQLSTATE 25006.*turn default_transaction_read_only off/)
    } finally {
      await connector.close()
      await engine.exec(`alter database "${database}" reset default_transaction_read_only`)
    }
    // the same table, writable again: the check says so
    const writable = createSqlConnector({ resource: config })
    try {
      const writes = (await checkResource({ name: 'readonly', config, connector: writable })).guarantees.find((g) => g.name === 'conditional_writes')
      assert.equal(writes?.status, 'holds', JSON.stringify(writes))
    } finally {
      await writable.close()
    }
  })

  it('a 57014 answered to COMMIT (a deferred trigger cancelled while COMMIT runs it): unknown, never claimed rolled back', async () => {
    await reset('deferred')
    await engine.exec(`create or replace function slow() returns trigger language plpgsql as $$ begin perform pg_sleep(5); return null; end $$`)
    await engine.exec(`create constraint trigger deferred_slow after update on deferred deferrable initially deferred for each row execute function slow()`)
    const connector = engine.connector('deferred', FIELDS)
    const write = connector.write(WRITE)
    for (let i = 0; ; i++) {
      await other.query('select pg_stat_clear_snapshot()')
      const { rows } = await other.query(`select pid from pg_stat_activity where query = 'COMMIT' and state = 'active' and wait_event = 'PgSleep'`)
      if (rows.length > 0) {
        await other.query('select pg_cancel_backend($1)', [rows[0].pid])
        break
      }
      assert.ok(i < 100, 'COMMIT never ran the deferred trigger')
      await new Promise((r) => setTimeout(r, 50))
    }
    const outcome = await write
    assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
    assert.match(messageOf(outcome), /canceling statement due to user request.*57014 at COMMIT.*may have been applied/s)
  })
})
