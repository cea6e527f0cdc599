import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import { startDemoGateway } from '../../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from '../../operations/support/flow.js'
import { resourceSchema } from '../../../src/config/index.js'
import { THINGS_FIELDS } from './support/upstream.js'

/**
 * Another connection (a sqlite3 shell, a backup, the application that owns the file) holds a lock on the SQLite
 * upstream. A connector statement that waits for it must not stop the event loop: better-sqlite3's busy_timeout waited
 * synchronously, and /health, every request and the lease-renewal timer stalled for up to statement_timeout_ms. Each
 * case asserts ordering only: a timer comes while the statement still waits, then it completes once the other
 * connection lets go; past the timeout the answer is the one it was (rate_limited, nothing written; a walk that
 * cannot read says unavailable, with SQLite's reason). The file is a rollback journal: there a held EXCLUSIVE lock
 * keeps readers out too, and a reader keeps a COMMIT waiting.
 */
describe('a SQLite upstream statement waiting for another connection’s lock', () => {
  let dir: TempDir
  let file: string
  let holder: BetterSqlite3.Database
  let connector: SqlConnector
  let triggered: SqlConnector
  const connectors: SqlConnector[] = []
  const make = (table: string, statementTimeoutMs = 30_000) => {
    const resource = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: `sqlite:${file}`, table, source: 'things-db' },
      fields: THINGS_FIELDS,
      version_field: 'version',
      review_fields: ['id'],
    })
    const c = createSqlConnector({ resource, statementTimeoutMs })
    connectors.push(c)
    return c
  }
  before(async () => {
    dir = await createTempDir('warrant-sql-busy-')
    file = join(dir.path, 'upstream.db')
    holder = new BetterSqlite3(file)
    holder.pragma('journal_mode = DELETE')
    for (const table of ['things', 'stamped']) {
      holder.exec(`create table ${table} (id text primary key, name text, n real, k integer, flag integer, tags text, at text,
        version integer not null, updated_at text not null, secret text not null)`)
      for (let i = 1; i <= 3; i++) holder.prepare(`insert into ${table} values (?, 'a', 1, 1, 0, '[]', null, 1, '2024-01-01T00:00:00.000Z', 's')`).run(`row_${i}`)
    }
    // an UPDATE trigger: the write is BEGIN IMMEDIATE, UPDATE, its rows read again, COMMIT
    holder.exec(`create trigger stamped_touch after update on stamped begin select 1; end`)
    connector = make('things')
    triggered = make('stamped')
  })
  after(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK')
    await Promise.all(connectors.map((c) => c.close()))
    holder?.close()
    await dir?.drop()
  })

  /**
   * Runs `work` while `holder` holds the lock `begin` takes: a timer must fire before `work` answers. `letGo`: the lock
   * is let go once the timer has fired (else held until `work` answers, past its wait).
   */
  const timerFirst = async <T>(begin: string, work: () => Promise<T>, letGo: boolean): Promise<T> => {
    const order: string[] = []
    holder.exec(begin)
    try {
      const pending = work().finally(() => order.push('answered'))
      await sleep(1)
      order.push('timer while waiting')
      if (letGo) holder.exec('COMMIT')
      const answer = await pending
      assert.deepEqual(order, ['timer while waiting', 'answered'])
      return answer
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
    }
  }
  const versionOf = (table: string, id: string) => (holder.prepare(`select version from ${table} where id = ?`).get(id) as { version: number }).version
  const write = (c: SqlConnector, id: string) => c.write({ id, expectedVersion: '1', set: { name: 'x' }, precondition: {} })
  const walk = async (c: SqlConnector) => {
    const session = await c.openSession()
    try {
      return await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 10 })
    } finally {
      await session.close()
    }
  }

  test('a write (an autocommit UPDATE … RETURNING) while another connection holds the write lock', async () => {
    assert.equal((await timerFirst('BEGIN IMMEDIATE', () => write(connector, 'row_1'), true)).kind, 'written')
    assert.equal(versionOf('things', 'row_1'), 2, 'written once')
  })

  test('a write read back in its transaction (an UPDATE trigger): BEGIN IMMEDIATE waits', async () => {
    assert.equal((await timerFirst('BEGIN IMMEDIATE', () => write(triggered, 'row_1'), true)).kind, 'written')
    assert.equal(versionOf('stamped', 'row_1'), 2, 'written once')
  })

  test('a write read back in its transaction: its COMMIT waits for a reader, and then commits', async () => {
    assert.equal((await timerFirst('BEGIN; select count(*) from stamped', () => write(triggered, 'row_2'), true)).kind, 'written')
    assert.equal(versionOf('stamped', 'row_2'), 2, 'written once')
  })

  test('a walk opened while another connection holds the exclusive lock', async () => {
    const page = await timerFirst('BEGIN EXCLUSIVE', () => walk(connector), true)
    assert.deepEqual(page.kind === 'page' ? page.items.map((r) => r.id) : page, ['row_1', 'row_2', 'row_3'])
  })

  test('past statement_timeout_ms a write is rate_limited, nothing written, as before; the event loop served meanwhile', async () => {
    const outcome = await timerFirst('BEGIN IMMEDIATE', () => write(make('things', 200), 'row_3'), false)
    assert.ok(outcome.kind === 'rate_limited' && outcome.notApplied === true, JSON.stringify(outcome))
    assert.match(outcome.message, /database is locked.*nothing was written, retried/)
    assert.equal(versionOf('things', 'row_3'), 1, 'not written')
  })

  test('past statement_timeout_ms a COMMIT still refused is retried with no proof of not applied (notApplied absent), as before; rolled back, nothing written', async () => {
    const outcome = await timerFirst('BEGIN; select count(*) from stamped', () => write(make('stamped', 200), 'row_3'), false)
    assert.ok(outcome.kind === 'rate_limited' && !('notApplied' in outcome), JSON.stringify(outcome))
    assert.equal(versionOf('stamped', 'row_3'), 1, 'not written')
  })

  test('past statement_timeout_ms a walk that could not open says unavailable, with SQLite’s reason', async () => {
    const page = await timerFirst('BEGIN EXCLUSIVE', () => walk(make('things', 200)), false)
    assert.equal(page.kind, 'unavailable', JSON.stringify(page))
    assert.match(page.kind === 'unavailable' ? page.message : '', /cannot open a read session .*database is locked/)
  })
})

describe('warrant serve while another connection holds the write lock of a SQLite upstream', () => {
  test('/health answers while an operation’s write waits; the write then lands once, never refused', { timeout: 120_000 }, async () => {
    const HOLD = { type: 'hold' }
    const fx = await startDemoGateway({
      store: 'sqlite',
      count: 30,
      edit: (raw) => {
        raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] } }
        // the longest wait allowed: a loaded machine never runs out of it before the lock is let go
        raw.resources.subscriptions.connector.statement_timeout_ms = 30_000
      },
    })
    const holder = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
    try {
      const [target] = (holder.prepare(`select id, version from subscriptions order by id limit 1`).all() as { id: string; version: number }[])
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { id: { in: [target!.id] } } }, HOLD)
      const order: string[] = []
      holder.exec('BEGIN IMMEDIATE')
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'busy-upstream' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      // several turns: the operation reaches its write meanwhile (no assertion rests on how long that takes)
      for (let i = 0; i < 10; i++) {
        await sleep(20)
        order.push(`health ${(await fetch(`${fx.base}/health`)).status}`)
      }
      holder.exec('COMMIT')
      const operation = await waitForOperation(agent, commit.body.operation_id, 90_000)
      order.push(`operation ${operation.state}`)
      assert.deepEqual(order, [...Array.from({ length: 10 }, () => 'health 200'), 'operation succeeded'])
      const [result] = await allResults(agent, operation.operation_id)
      // the write waited for the lock: it was never refused for it (a refusal is a rate_limited hit, retried later)
      assert.deepEqual([result.outcome, result.rate_limit_hits], ['succeeded', 0], JSON.stringify(result))
      assert.equal((holder.prepare('select version from subscriptions where id = ?').get(target!.id) as { version: number }).version, target!.version + 1, 'written once')
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
      await fx.close()
    }
  })
})
