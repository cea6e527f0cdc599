import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import mysql from 'mysql2/promise'
import { resourceSchema, type ResourceConfig } from '../../../src/config/index.js'
import type { WriteOutcome } from '../../../src/connectors/connector.js'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, type Row, type Upstream } from './support/upstream.js'

/**
 * What MariaDB does under contention and failure, and what the connector makes of it: a lock it gave up on
 * (lock wait timeout, deadlock) is retried, a connection lost before COMMIT wrote nothing (rolled_back), and a write is
 * judged by the rows it matched (CLIENT_FOUND_ROWS), never reported written unless its version moved.
 */

const resourceFor = (url: string, table = 'things', version: 'integer' | 'timestamp' = 'integer'): ResourceConfig =>
  resourceSchema.parse({
    environment: { name: 'test' },
    connector: { kind: 'sql', url, table, source: 'things-db' },
    fields:
      table === 'things'
        ? { id: 'string', name: 'string', n: 'number', k: 'integer', flag: 'boolean', tags: 'tags', at: 'timestamp', version: 'integer', updated_at: 'timestamp', secret: 'string' }
        : { id: 'string', title: 'string', rev: version },
    id_field: 'id',
    version_field: table === 'things' ? 'version' : 'rev',
    review_fields: ['id'],
  })

const rows: Row[] = Array.from({ length: 5 }, (_, i) => ({
  id: `row_${i + 1}`,
  name: 'before',
  n: 1,
  k: 1,
  flag: true,
  tags: [],
  at: null,
  version: 1,
  updated_at: '2024-01-01T00:00:00.000Z',
  secret: 's',
}))

let diagnose: (() => Promise<unknown>) | undefined

/**
 * Polls until `check` holds. InnoDB refreshes information_schema.innodb_trx only when it was last read more
 * than 0.1 s ago, so a faster poll would read the same stale view for ever.
 */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await new Promise((r) => setTimeout(r, 150))
    if (await check()) return
  }
  assert.fail(`timed out waiting for ${what}: ${JSON.stringify(await diagnose?.())}`)
}

describe('sql connector on MariaDB: faults', () => {
  let upstream: Upstream
  let other: mysql.Connection
  let connector: SqlConnector
  const waiting = async (statement: string) => {
    const [found] = await other.query(
      "SELECT trx_mysql_thread_id AS id FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND trx_mysql_thread_id <> CONNECTION_ID() AND trx_query LIKE ?",
      [`${statement}%`],
    )
    return (found as { id: number }[]).map((r) => r.id)
  }
  const nameOf = async (id: string) => ((await other.query('SELECT name, version FROM things WHERE id = ?', [id]))[0] as { name: string; version: number }[])[0]

  before(async () => {
    upstream = await createUpstream('mysql')
    const url = new URL(upstream.url)
    other = await mysql.createConnection({ host: url.hostname, port: Number(url.port), user: url.username, database: url.pathname.slice(1) })
    connector = createSqlConnector({ resource: resourceFor(upstream.url), statementTimeoutMs: 1_000 })
    diagnose = async () => (await other.query('SELECT trx_state, trx_query, trx_mysql_thread_id FROM information_schema.innodb_trx'))[0]
  })
  after(async () => {
    await connector?.close()
    await other?.end()
    await upstream?.drop()
  })

  it('a lock wait timeout is retried, and nothing was written', async () => {
    await upstream.reset(rows)
    await other.beginTransaction()
    await other.query('SELECT * FROM things WHERE id = ? FOR UPDATE', ['row_1'])
    try {
      const outcome = await connector.write({ id: 'row_1', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
      assert.equal(outcome.kind, 'rate_limited', JSON.stringify(outcome))
      assert.ok(outcome.kind === 'rate_limited' && outcome.status === 503 && outcome.retryAfterSeconds > 0)
      assert.match(outcome.kind === 'rate_limited' ? outcome.message : '', /nothing was written, retried/)
    } finally {
      await other.rollback()
    }
    assert.deepEqual(await nameOf('row_1'), { name: 'before', version: 1 })
    // once the lock is gone, the same write goes through
    const retry = await connector.write({ id: 'row_1', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
    assert.equal(retry.kind, 'written', JSON.stringify(retry))
  })

  it('a deadlock is retried: the database rolled the write back', async () => {
    await upstream.reset(rows)
    await upstream.exec('CREATE TABLE counters (id integer primary key, n integer not null)')
    await upstream.exec(`INSERT INTO counters VALUES ${Array.from({ length: 200 }, (_, i) => `(${i + 1}, 0)`).join(', ')}`)
    // every write to things also touches counter 1: the connector's UPDATE will wait on it inside the trigger
    await upstream.exec('CREATE TRIGGER things_touch BEFORE UPDATE ON things FOR EACH ROW UPDATE counters SET n = n + 1 WHERE id = 1')
    const slow = createSqlConnector({ resource: resourceFor(upstream.url), statementTimeoutMs: 20_000 })
    try {
      await other.beginTransaction()
      // 200 rows changed: InnoDB rolls back the lighter transaction of a deadlock, which is the connector's
      await other.query('UPDATE counters SET n = n + 1')
      const write = slow.write({ id: 'row_2', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
      await until(async () => (await waiting('UPDATE counters')).length > 0, "the connector's UPDATE to wait on counter 1 (in its trigger)")
      // the other side now wants the row the connector holds: a cycle
      await other.query('UPDATE things SET name = ? WHERE id = ?', ['other', 'row_2'])
      const outcome: WriteOutcome = await write
      assert.equal(outcome.kind, 'rate_limited', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rate_limited' ? outcome.message : '', /deadlock/i)
      await other.rollback()
      assert.deepEqual(await nameOf('row_2'), { name: 'before', version: 1 })
    } finally {
      await other.rollback().catch(() => undefined)
      await upstream.exec('DROP TRIGGER IF EXISTS things_touch')
      await slow.close()
    }
  })

  it('a connection killed before COMMIT wrote nothing: rolled_back (no validation refusal), not a success and not unknown', async () => {
    await upstream.reset(rows)
    const slow = createSqlConnector({ resource: resourceFor(upstream.url), statementTimeoutMs: 20_000 })
    try {
      await other.beginTransaction()
      await other.query('SELECT * FROM things WHERE id = ? FOR UPDATE', ['row_3'])
      const write = slow.write({ id: 'row_3', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
      let victims: number[] = []
      await until(async () => (victims = await waiting('update `things`')).length > 0, "the connector's UPDATE to wait on the row lock")
      await other.query(`KILL ${Number(victims[0])}`)
      const outcome = await write
      assert.equal(outcome.kind, 'rolled_back', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rolled_back' ? outcome.message : '', /never committed: it was rolled back, so nothing was written/)
      await other.rollback()
      assert.deepEqual(await nameOf('row_3'), { name: 'before', version: 1 })
      // the pool replaced the dead connection
      const next = await slow.write({ id: 'row_3', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
      assert.equal(next.kind, 'written', JSON.stringify(next))
    } finally {
      await other.rollback().catch(() => undefined)
      await slow.close()
    }
  })

  it('affected rows are matched rows (CLIENT_FOUND_ROWS): an unchanged value is still written, and a version that cannot move is refused before anything is written', async () => {
    await upstream.reset(rows)
    // setting the value the row already has: matched, so written, and the version still moves
    const same = await connector.write({ id: 'row_4', expectedVersion: '1', set: { name: 'before' }, precondition: { name: 'before' } })
    assert.equal(same.kind, 'written', JSON.stringify(same))
    assert.equal(same.kind === 'written' && same.record?.version, '2')

    // a DATETIME without fractions cannot hold "one millisecond later": the row matches, nothing changes
    await upstream.exec('CREATE TABLE coarse (id varchar(64) primary key, title varchar(64) not null, rev datetime not null)')
    await upstream.exec('INSERT INTO coarse VALUES (?, ?, ?)', ['c1', 'one', '2024-01-01T00:00:00Z'])
    const coarse = createSqlConnector({ resource: resourceFor(upstream.url, 'coarse', 'timestamp'), now: () => new Date('2024-01-01T00:00:00.000Z') })
    try {
      const outcome = await coarse.write({ id: 'c1', expectedVersion: '2024-01-01T00:00:00.000Z', set: { title: 'two' }, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      // the catalogue says so first (version.test.ts); the read back in the transaction is the backstop
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', /keeps whole seconds.*nothing was written/)
      const [stored] = (await other.query('SELECT title FROM coarse WHERE id = ?', ['c1']))[0] as { title: string }[]
      assert.equal(stored!.title, 'one', 'the refused write was not made')
    } finally {
      await coarse.close()
    }
  })

  it('a write nobody could have matched reads the row back to say why, in the same terms as the other engines', async () => {
    await upstream.reset(rows)
    const stale = await connector.write({ id: 'row_5', expectedVersion: '7', set: { name: 'x' }, precondition: {} })
    assert.equal(stale.kind === 'conflict' && stale.reason, 'version_changed')
    const missing = await connector.write({ id: 'row_9', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
    assert.equal(missing.kind === 'conflict' && missing.reason, 'missing')
    const refused = await connector.write({ id: 'row_5', expectedVersion: '1', set: { name: 'x' }, precondition: { name: 'BEFORE' } })
    assert.equal(refused.kind === 'conflict' && refused.reason, 'precondition_failed', 'the precondition compares exactly, not by the column collation')
  })
})
