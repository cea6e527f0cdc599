import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import type { WriteOutcome, WriteRequest } from '../../../src/connectors/index.js'
import { mysqlErrPacket, startCuttingProxy, type CuttingProxy } from './support/cutting-proxy.js'
import { createUpstream, thingsResource, type Row, type Upstream } from './support/upstream.js'

/**
 * A write made as a transaction (MySQL/MariaDB always; PostgreSQL and SQLite where a trigger may change the row
 * after RETURNING) whose connection is lost before COMMIT was sent. It was recorded `rejected` 503 "never committed;
 * nothing was written", a validation refusal that counted toward `halt_after_validation_failures`, for a write the
 * database never judged. The truth, by the step the connection was lost at:
 * - START TRANSACTION / BEGIN failed: the UPDATE was never sent: `not_sent`;
 * - the UPDATE was sent and the transaction never committed (the server rolls it back when the session ends):
 *   `rolled_back`, a failure that is no validation;
 * - lost during COMMIT: the server may have committed: `unknown`.
 * Real servers; a TCP proxy on loopback cuts the connection at the packet named, and KILL / pg_terminate_backend
 * end the session while its UPDATE waits on a row lock another connection holds.
 */
const ROW: Row = { id: 'row_1', name: 'before', n: 1, k: 1, flag: true, tags: [], at: null, version: 1, updated_at: '2024-01-01T00:00:00.000Z', secret: 's' }
const WRITE: WriteRequest = { id: 'row_1', expectedVersion: '1', set: { name: 'after' }, precondition: {} }

const opened: SqlConnector[] = []
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()))
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function connectorTo(url: string): SqlConnector {
  const connector = createSqlConnector({ resource: thingsResource(url), statementTimeoutMs: 5_000 })
  opened.push(connector)
  return connector
}

type Dialect = 'postgres' | 'mysql'

/** The upstream with one row; on PostgreSQL an UPDATE trigger, so its write is a transaction too. */
async function upstreamOf(dialect: Dialect): Promise<Upstream> {
  const upstream = await createUpstream(dialect)
  cleanups.push(() => upstream.drop())
  await upstream.reset([ROW])
  if (dialect === 'postgres') {
    await upstream.exec('create function things_touch() returns trigger language plpgsql as $$ begin return new; end $$')
    await upstream.exec('create trigger things_touch before update on things for each row execute function things_touch()')
  }
  return upstream
}

/** The row as the server holds it, over a connection of the test's own. */
async function stored(dialect: Dialect, url: string): Promise<{ name: string; version: number }> {
  if (dialect === 'postgres') {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query(`select name, version from things where id = 'row_1'`)).rows[0]
    } finally {
      await client.end()
    }
  }
  const conn = await mysql.createConnection(url)
  try {
    const [rows] = await conn.query(`select name, version from things where id = 'row_1'`)
    return (rows as { name: string; version: number }[])[0]!
  } finally {
    await conn.end()
  }
}

/** The connector's URL through the proxy; the proxy in front of the upstream's server. */
async function throughProxy(upstream: Upstream): Promise<{ url: string; proxy: CuttingProxy }> {
  const direct = new URL(upstream.url)
  const proxy = await startCuttingProxy({ host: direct.hostname, port: Number(direct.port) })
  cleanups.push(() => proxy.close())
  const url = new URL(upstream.url)
  url.port = String(proxy.port)
  return { url: url.toString(), proxy }
}

function messageOf(outcome: WriteOutcome): string {
  return 'message' in outcome ? outcome.message : ''
}

/**
 * One write through a proxy that cuts its connection at `pattern`: the connection is open and the catalogue read
 * first, so the next packets sent are the write's own.
 */
async function writeCutAt(
  upstream: Upstream,
  pattern: string,
  when: 'before' | 'after',
  request: WriteRequest = WRITE,
  answer?: Buffer,
): Promise<{ outcome: WriteOutcome; connector: SqlConnector }> {
  const { url, proxy } = await throughProxy(upstream)
  const connector = connectorTo(url)
  assert.equal((await connector.readByIds([request.id])).records.get(request.id)?.version, request.expectedVersion)
  await connector.tableProblems?.()
  proxy.arm(pattern, when, answer)
  const outcome = await connector.write(request)
  assert.equal(proxy.cuts, 1)
  return { outcome, connector }
}

for (const dialect of ['mysql', 'postgres'] as const) {
  const begin = dialect === 'mysql' ? 'START TRANSACTION' : 'BEGIN'
  describe(`${dialect}: a write transaction whose connection is lost`, () => {
    it(`at ${begin}: not_sent, the UPDATE was never sent`, async () => {
      const upstream = await upstreamOf(dialect)
      const { outcome } = await writeCutAt(upstream, begin, 'before')
      assert.equal(outcome.kind, 'not_sent', JSON.stringify(outcome))
      assert.match(messageOf(outcome), /^the transaction could not begin \(.+\): the UPDATE was never sent, so nothing was written$/)
      assert.deepEqual(await stored(dialect, upstream.url), { name: 'before', version: 1 })
    })

    it('after the UPDATE was sent, before COMMIT: rolled_back, nothing written, never rejected', async () => {
      const upstream = await upstreamOf(dialect)
      const { outcome, connector } = await writeCutAt(upstream, 'update ', 'after')
      assert.equal(outcome.kind, 'rolled_back', JSON.stringify(outcome))
      assert.match(messageOf(outcome), /\(the UPDATE was sent, but its transaction was never committed: it was rolled back, so nothing was written\)$/)
      // the server rolls back the session's transaction once it sees the connection gone
      for (let i = 0; i < 50 && (await stored(dialect, upstream.url)).name !== 'before'; i++) await new Promise((r) => setTimeout(r, 100))
      assert.deepEqual(await stored(dialect, upstream.url), { name: 'before', version: 1 })
      // the next write takes a new connection and is made
      assert.equal((await connector.write(WRITE)).kind, 'written')
    })

    it('at COMMIT, after it reached the server: unknown, and the server did commit it', async () => {
      const upstream = await upstreamOf(dialect)
      const { outcome } = await writeCutAt(upstream, 'COMMIT', 'after')
      assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
      for (let i = 0; i < 50 && (await stored(dialect, upstream.url)).name !== 'after'; i++) await new Promise((r) => setTimeout(r, 100))
      assert.deepEqual(await stored(dialect, upstream.url), { name: 'after', version: 2 })
    })

    it('at COMMIT, before it reached the server: unknown all the same (the client cannot tell), and nothing was written', async () => {
      const upstream = await upstreamOf(dialect)
      const { outcome } = await writeCutAt(upstream, 'COMMIT', 'before')
      assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
      assert.match(messageOf(outcome), /may have been applied|unknown|Connection|closed|lost|terminated/i)
      for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 50))
      assert.deepEqual(await stored(dialect, upstream.url), { name: 'before', version: 1 })
    })

    it(`its session ended by the server (${dialect === 'mysql' ? 'KILL' : 'pg_terminate_backend'}) while the UPDATE waits on a row lock: rolled_back`, async () => {
      const upstream = await upstreamOf(dialect)
      const connector = connectorTo(upstream.url)
      await connector.tableProblems?.()
      let release: () => Promise<unknown>
      let waiting: () => Promise<number[]>
      let end: (id: number) => Promise<unknown>
      if (dialect === 'postgres') {
        const other = new pg.Client({ connectionString: upstream.url })
        await other.connect()
        cleanups.push(() => other.end())
        await other.query('begin')
        await other.query(`update things set name = 'held' where id = 'row_1'`)
        release = () => other.query('rollback')
        waiting = async () => {
          await other.query('select pg_stat_clear_snapshot()')
          return (await other.query(`select pid from pg_stat_activity where wait_event_type = 'Lock' and query like 'update "things"%'`)).rows.map((r) => r.pid)
        }
        end = (pid) => other.query('select pg_terminate_backend($1)', [pid])
      } else {
        const other = await mysql.createConnection(upstream.url)
        const watcher = await mysql.createConnection(upstream.url)
        cleanups.push(() => other.end(), () => watcher.end())
        await other.query('START TRANSACTION')
        await other.query(`update things set name = 'held' where id = 'row_1'`)
        release = () => other.query('ROLLBACK')
        waiting = async () =>
          ((await watcher.query("SELECT trx_mysql_thread_id AS id FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE 'update `things`%'"))[0] as { id: number }[]).map(
            (r) => r.id,
          )
        end = (id) => watcher.query(`KILL ${Number(id)}`)
      }
      const write = connector.write(WRITE)
      for (let i = 0; ; i++) {
        const found = await waiting()
        if (found.length > 0) {
          await end(found[0]!)
          break
        }
        assert.ok(i < 60, 'the connector never waited on the row')
        await new Promise((r) => setTimeout(r, 150))
      }
      const outcome = await write
      await release()
      assert.equal(outcome.kind, 'rolled_back', JSON.stringify(outcome))
      assert.match(messageOf(outcome), /it was rolled back, so nothing was written\)$/)
      assert.deepEqual(await stored(dialect, upstream.url), { name: 'before', version: 1 })
    })
  })
}

describe('postgres: an autocommitted write (no trigger: RETURNING is the answer) whose connection is cut', () => {
  it('after the UPDATE was sent: unknown, and the process lives on (the checked-out client had no error listener: the drop was an uncaught exception)', async () => {
    const upstream = await createUpstream('postgres')
    cleanups.push(() => upstream.drop())
    await upstream.reset([ROW, { ...ROW, id: 'row_2' }])
    const { outcome, connector } = await writeCutAt(upstream, 'update ', 'after')
    // the server got the UPDATE and may have run it (autocommitted) after the connection went
    assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
    // the pool let go of the dead client: the next write is made on a new one
    const next = await connector.write({ ...WRITE, id: 'row_2' })
    assert.equal(next.kind, 'written', JSON.stringify(next))
  })
})

/**
 * MySQL/MariaDB: a COMMIT answered with an error the classifier takes, on an UPDATE, as "the statement was rolled
 * back" (1205 lock wait timeout, 1969 max_statement_time, 1213 deadlock). At COMMIT it proves nothing: a middlebox or
 * the server may have committed (here the proxy forwards COMMIT, the server commits, and the client is answered the
 * error). It was passed through raw: `rate_limited`, "nothing was written, retried", for a write that landed.
 */
describe('mysql: a COMMIT answered with a lock or time-limit error', () => {
  for (const [errno, sqlState, text] of [
    [1205, 'HY000', 'Lock wait timeout exceeded; try restarting transaction'],
    [1969, '70100', 'Query execution was interrupted (max_statement_time exceeded)'],
    [1213, '40001', 'Deadlock found when trying to get lock; try restarting transaction'],
  ] as const) {
    it(`${errno}: unknown, never "nothing was written" (the server committed it)`, async () => {
      const upstream = await upstreamOf('mysql')
      const { outcome } = await writeCutAt(upstream, 'COMMIT', 'after', WRITE, mysqlErrPacket(errno, sqlState, text))
      assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
      assert.match(messageOf(outcome), new RegExp(`${text.slice(0, 20)}.*at COMMIT.*may have been applied`))
      for (let i = 0; i < 50 && (await stored('mysql', upstream.url)).name !== 'after'; i++) await new Promise((r) => setTimeout(r, 100))
      assert.deepEqual(await stored('mysql', upstream.url), { name: 'after', version: 2 })
    })
  }
})
