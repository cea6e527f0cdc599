import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { WarrantError } from '../../src/contract/index.js'
import { createStore, immediateTransaction, unsyncedSqliteCommit, type Store } from '../../src/store/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'

/**
 * Another connection (a `warrant` CLI command, a second `warrant serve`, a sqlite3 shell) holds the SQLite store's
 * write lock. A store statement that waits for it must not stop the event loop: better-sqlite3's busy_timeout waited
 * synchronously, and /health, every other request and the lease-renewal timer stalled for up to store.busy_timeout_ms.
 * Each case asserts ordering only: a timer (or an HTTP answer) comes while the write still waits, then the write
 * completes once the other connection lets go; past the timeout the refusal is 503 `store_unavailable` as before.
 */
describe('a SQLite store write waiting for another connection’s lock', () => {
  let dir: TempDir
  let store: Store
  let holder: BetterSqlite3.Database
  before(async () => {
    dir = await createTempDir('warrant-busy-async-')
    // the longest wait allowed: a loaded machine never runs out of it before the lock is let go
    store = await createStore({ url: `sqlite:${join(dir.path, 'warrant.db')}`, busyTimeoutMs: 30_000 })
    assert.equal((await store.migrate()).error, undefined)
    await sql`create table busy_probe (x integer)`.execute(store.db)
    holder = new BetterSqlite3(join(dir.path, 'warrant.db'))
  })
  after(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK')
    holder?.close()
    await store?.close()
    await dir?.drop()
  })

  /** Runs `write` while `holder` holds the lock; a timer must fire while it waits; then the lock is let go. */
  const waitsWithoutBlocking = async (write: () => Promise<unknown>) => {
    const order: string[] = []
    holder.exec('BEGIN IMMEDIATE')
    try {
      const pending = write().then(
        () => order.push('write done'),
        (error: unknown) => order.push(`write failed: ${String(error)}`),
      )
      await sleep(1)
      order.push('timer while waiting')
      holder.exec('COMMIT')
      await pending
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
    }
    assert.deepEqual(order, ['timer while waiting', 'write done'])
  }

  test('an autocommit statement', async () => {
    await waitsWithoutBlocking(() => sql`insert into busy_probe (x) values (1)`.execute(store.db))
  })

  test('a transaction begun IMMEDIATE', async () => {
    await waitsWithoutBlocking(() => immediateTransaction(store.db, (conn) => sql`insert into busy_probe (x) values (2)`.execute(conn)))
  })

  test('a deferred transaction whose first statement writes', async () => {
    await waitsWithoutBlocking(() => store.db.transaction().execute((trx) => sql`insert into busy_probe (x) values (3)`.execute(trx)))
  })

  test('an unsynced commit whose rows go through the raw handle (a selection’s members)', async () => {
    await waitsWithoutBlocking(() => unsyncedSqliteCommit(store.db, async () => void store.sqlite!.prepare('insert into busy_probe (x) values (4)').run()))
  })

  test('every write landed once', async () => {
    const rows = await sql<{ x: number }>`select x from busy_probe order by x`.execute(store.db)
    assert.deepEqual(
      rows.rows.map((r) => r.x),
      [1, 2, 3, 4],
    )
  })

  test('a transaction that read first and comes to write is refused at once, not retried: waiting cannot help', async () => {
    holder.exec('BEGIN IMMEDIATE')
    try {
      await assert.rejects(
        store.db.transaction().execute(async (trx) => {
          await sql`select count(*) from busy_probe`.execute(trx)
          await sql`insert into busy_probe (x) values (5)`.execute(trx)
        }),
        (error: unknown) => {
          assert.ok(error instanceof WarrantError)
          assert.equal(error.code, 'store_unavailable')
          assert.match(error.message, /which had read first, came to write/)
          return true
        },
      )
    } finally {
      holder.exec('ROLLBACK')
    }
  })

  test('past store.busy_timeout_ms: 503 store_unavailable with the same details, the event loop served meanwhile', async () => {
    const short = await createStore({ url: `sqlite:${join(dir.path, 'warrant.db')}`, busyTimeoutMs: 200 })
    const order: string[] = []
    holder.exec('BEGIN IMMEDIATE')
    try {
      const pending = immediateTransaction(short.db, (conn) => sql`insert into busy_probe (x) values (6)`.execute(conn)).then(
        () => order.push('write done'),
        (error: unknown) => {
          order.push('refused')
          return error
        },
      )
      await sleep(1)
      order.push('timer while waiting')
      const error = await pending
      assert.deepEqual(order, ['timer while waiting', 'refused'])
      assert.ok(error instanceof WarrantError, String(error))
      assert.equal(error.code, 'store_unavailable')
      assert.match(error.message, /SQLite store .* is busy: another connection .* held its lock past store\.busy_timeout_ms \(200 ms\)/)
      assert.deepEqual(error.details, { store: short.url, reason: 'busy', driver_code: 'SQLITE_BUSY', busy_timeout_ms: 200 })
    } finally {
      holder.exec('ROLLBACK')
      await short.close()
    }
  })
})

describe('warrant serve while another connection holds the SQLite store write lock', () => {
  test('/health answers while a request’s store write waits; the request then succeeds', async () => {
    const fx = await startDemoGateway({ store: 'sqlite', count: 50, edit: (raw) => (raw.store = { url: raw.store, busy_timeout_ms: 30_000 }) })
    const holder = new BetterSqlite3(fx.storeUrl.slice('sqlite:'.length))
    try {
      const order: string[] = []
      holder.exec('BEGIN IMMEDIATE')
      const selection = fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
      const settled = selection.then((answer) => order.push(`selection ${answer.status}`))
      // several turns: the selection reaches its store write meanwhile (no assertion rests on how long that takes)
      for (let i = 0; i < 10; i++) {
        await sleep(20)
        order.push(`health ${(await fetch(`${fx.base}/health`)).status}`)
      }
      holder.exec('COMMIT')
      await settled
      assert.deepEqual(order, [...Array.from({ length: 10 }, () => 'health 200'), 'selection 201'])
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
      await fx.close()
    }
  })
})
