import assert from 'node:assert/strict'
import { unlink } from 'node:fs/promises'
import { afterEach, describe, it } from 'node:test'
import pg from 'pg'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import type { WriteOutcome, WriteRequest } from '../../../src/connectors/index.js'
import { createTestMysqlDatabase, createTestPostgresDatabase } from '../../support/stores.js'
import { closedPort } from './support/closed-port.js'
import { createUpstream, thingsResource, type Kind, type Row, type Upstream } from './support/upstream.js'

/**
 * A database that refuses the connection the write would go over (nothing listens on its port, the database
 * was dropped since the plan, the SQLite file is gone) was given nothing: no statement left the gateway. It
 * was recorded `rejected` (a validation refusal, "could not connect"); the truth is `not_sent`, a definite
 * failure saying the database could not be reached. A connection lost once the statement was on it is not
 * that: it stays `unknown`.
 */
const ROW: Row = { id: 'row_1', name: 'before', n: 1, k: 1, flag: true, tags: [], at: null, version: 1, updated_at: '2024-01-01T00:00:00.000Z', secret: 's' }
const WRITE: WriteRequest = { id: 'row_1', expectedVersion: '1', set: { name: 'after' }, precondition: {} }

function connectorTo(url: string): SqlConnector {
  const connector = createSqlConnector({ resource: thingsResource(url) })
  opened.push(connector)
  return connector
}

const opened: SqlConnector[] = []
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()))
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function assertNotSent(outcome: WriteOutcome, cause: RegExp): void {
  assert.equal(outcome.kind, 'not_sent', JSON.stringify(outcome))
  const message = outcome.kind === 'not_sent' ? outcome.message : ''
  assert.match(message, /^the database could not be reached/, message)
  assert.match(message, cause, message)
  assert.match(message, /no statement was sent, so nothing was written$/, message)
}

async function upstreamWithRow(kind: Kind): Promise<Upstream> {
  const upstream = await createUpstream(kind)
  cleanups.push(() => upstream.drop())
  await upstream.reset([ROW])
  return upstream
}

describe('sql write: a database that cannot be reached was sent nothing (not_sent)', () => {
  for (const dialect of ['postgres', 'mysql'] as const) {
    it(`${dialect}: nothing listens on the port: not_sent (ECONNREFUSED), as one write and as a window`, async () => {
      const port = await closedPort()
      const url = dialect === 'postgres' ? `postgres://postgres@127.0.0.1:${port}/nowhere` : `mysql://root@127.0.0.1:${port}/nowhere`
      const connector = connectorTo(url)
      assertNotSent(await connector.write(WRITE), /ECONNREFUSED/)
      if (connector.writeWindow) {
        const outcomes = await connector.writeWindow([WRITE, { ...WRITE, id: 'row_2' }])
        assert.equal(outcomes.length, 2)
        for (const outcome of outcomes) {
          assert.notEqual(outcome.kind, 'threw')
          if (outcome.kind !== 'threw') assertNotSent(outcome, /ECONNREFUSED/)
        }
      }
    })
  }

  it('postgres: the database was dropped after the connector read it: not_sent (3D000), the reason is the database, not the write', async () => {
    const database = await createTestPostgresDatabase()
    cleanups.push(() => database.drop())
    const setup = new pg.Client({ connectionString: database.url })
    await setup.connect()
    await setup.query('create table things (id text primary key, name text, n double precision, k integer, flag boolean, tags text, at timestamptz, version integer not null, updated_at timestamptz not null, secret text not null)')
    await setup.query(`insert into things values ('row_1', 'before', 1, 1, true, '[]', null, 1, '2024-01-01T00:00:00Z', 's')`)
    await setup.end()
    const connector = connectorTo(database.url)
    // the plan: the record read over the connector's own pool, whose connection then sits idle
    const read = await connector.readByIds(['row_1'])
    assert.equal(read.records.get('row_1')?.version, '1', JSON.stringify(read.failed))
    // FORCE ends the idle connection too; the pool drops it, and the write needs a new one
    await database.drop()
    await new Promise((resolve) => setTimeout(resolve, 100))
    assertNotSent(await connector.write(WRITE), /database "warrant_test_\w+" does not exist/)
  })

  it('mysql: the database was dropped before the write connected: not_sent (unknown database)', async () => {
    const database = await createTestMysqlDatabase()
    const connector = connectorTo(database.url)
    await database.drop()
    assertNotSent(await connector.write(WRITE), /Unknown database/)
  })

  it('mysql: a user the server refuses at login: unauthorized (it halts), saying nothing was sent', async () => {
    const upstream = await upstreamWithRow('mysql')
    const url = new URL(upstream.url)
    url.username = 'warrant_no_such_user'
    const outcome = await connectorTo(url.toString()).write(WRITE)
    assert.equal(outcome.kind, 'unauthorized', JSON.stringify(outcome))
    assert.match(outcome.kind === 'unauthorized' ? outcome.message : '', /Access denied.*\(refused at login, before any statement; nothing was written\)$/)
  })

  it('sqlite: the file is gone before the connector opened it: not_sent', async () => {
    const upstream = await upstreamWithRow('sqlite')
    const connector = connectorTo(upstream.url)
    const file = upstream.url.slice('sqlite:'.length)
    await unlink(file)
    assertNotSent(await connector.write(WRITE), /cannot open SQLite database/)
  })

  it('postgres: the connection is lost while the UPDATE waits on the server: unknown, never not_sent', async () => {
    const upstream = await upstreamWithRow('postgres')
    const other = new pg.Client({ connectionString: upstream.url })
    await other.connect()
    cleanups.push(() => other.end())
    const connector = connectorTo(upstream.url)
    await other.query('begin')
    await other.query(`update things set name = 'held' where id = 'row_1'`)
    const write = connector.write(WRITE)
    // the UPDATE is on the server, waiting for the row lock: its connection is then cut
    for (let i = 0; ; i++) {
      await other.query('select pg_stat_clear_snapshot()')
      const { rows } = await other.query(`select pg_terminate_backend(pid) as ended from pg_stat_activity where wait_event_type = 'Lock' and query like 'update "things"%'`)
      if (rows.length > 0) break
      assert.ok(i < 200, 'the connector never waited on the row')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const outcome = await write
    await other.query('rollback')
    assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
  })
})
