import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { sql, type Kysely } from 'kysely'
import { syncedSqliteCommit, unsyncedSqliteCommit, type Database } from '../../src/store/index.js'
import { createTestStore } from '../support/stores.js'

/** SQLite's `synchronous` setting as the connection holds it now: 2 is FULL, 1 is NORMAL. */
async function synchronousOf(db: Kysely<Database>): Promise<number> {
  return Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]!.synchronous)
}

/**
 * A transaction whose commit skips the sync (a window's outcomes) must not leave the store's one connection
 * unsynced for whoever commits next (an in-flight mark, whose durability the executor's promise rests on).
 */
describe('commits with and without their own sync (sqlite store)', () => {
  test('an unsynced commit runs at NORMAL and leaves the connection at FULL, whether its work committed or threw', async () => {
    const { store, drop } = await createTestStore('sqlite')
    try {
      const seen = await unsyncedSqliteCommit(store.db, async (trx) => {
        await trx.insertInto('kv').values({ key: 'k1', value: 'v1' }).execute()
        return synchronousOf(trx)
      })
      assert.equal(seen, 1, 'inside: NORMAL')
      assert.equal(await synchronousOf(store.db), 2, 'after a commit: FULL again')
      await assert.rejects(
        unsyncedSqliteCommit(store.db, async (trx) => {
          await trx.insertInto('kv').values({ key: 'k2', value: 'v2' }).execute()
          throw new Error('the work failed')
        }),
        /the work failed/,
      )
      assert.equal(await synchronousOf(store.db), 2, 'after a rollback: FULL again')
      const keys = (await store.db.selectFrom('kv').select('key').where('key', 'in', ['k1', 'k2']).execute()).map((r) => r.key)
      assert.deepEqual(keys, ['k1'], 'the committed row is there, the rolled-back one is not')
    } finally {
      await drop()
    }
  })

  test('outside WAL mode (a rollback journal) an unsynced commit is synced after all', async () => {
    const { store, drop } = await createTestStore('sqlite')
    try {
      await sql`pragma journal_mode = delete`.execute(store.db)
      assert.equal(await unsyncedSqliteCommit(store.db, (trx) => synchronousOf(trx)), 2)
    } finally {
      await drop()
    }
  })

  test('a synced commit runs at FULL even when something left the connection at NORMAL', async () => {
    const { store, drop } = await createTestStore('sqlite')
    try {
      await sql`pragma synchronous = normal`.execute(store.db)
      assert.equal(await syncedSqliteCommit(store.db, (trx) => synchronousOf(trx)), 2)
    } finally {
      await drop()
    }
  })

  /**
   * The store runs at busy_timeout 0 and waits for another connection's lock on timers, in kysely's driver. A
   * transaction's work may write through the raw handle (a selection's members), past that waiting: the transaction
   * must hold the write lock from its BEGIN, or that first raw write is refused busy at once.
   */
  for (const [name, commit] of [['unsynced', unsyncedSqliteCommit], ['synced', syncedSqliteCommit]] as const) {
    test(`an ${name} commit whose work writes through the raw handle waits for another connection's write lock`, async () => {
      const { store, drop } = await createTestStore('sqlite')
      const worker = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads')
         const db = new (require('better-sqlite3'))(workerData)
         db.exec('BEGIN IMMEDIATE')
         parentPort.postMessage('held')
         setTimeout(() => { db.exec('COMMIT'); db.close(); parentPort.postMessage('released') }, 300)`,
        { eval: true, workerData: store.sqlite!.name },
      )
      try {
        await new Promise((resolve) => worker.once('message', resolve))
        const started = Date.now()
        await commit(store.db, async () => {
          store.sqlite!.prepare('insert into kv (key, value) values (?, ?)').run(`raw-${name}`, 'v')
        })
        assert.ok(Date.now() - started >= 150, 'it met the lock and waited')
        const row = await store.db.selectFrom('kv').select('value').where('key', '=', `raw-${name}`).executeTakeFirst()
        assert.equal(row?.value, 'v')
      } finally {
        await worker.terminate()
        await drop()
      }
    })
  }
})
