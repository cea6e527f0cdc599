import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'

/**
 * Another connection (a `sqlite3` shell in a transaction, a backup, a long write of another process) holds the store's
 * write lock past store.busy_timeout_ms while a `warrant` command starts and migrates the store. The command must say
 * the store is busy and which key sets the wait (exit 4, the store could not be used), never that it hit a bug (was:
 * "internal error: store migration failed: …", exit 1); and a store with nothing to migrate must not wait for the lock
 * at all to find so. The lock is held by a worker thread, its own connection: better-sqlite3 waits synchronously on
 * the command's.
 */
function lockHolder(file: string) {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
     const db = new (require('better-sqlite3'))(workerData)
     // the store is in WAL mode as Warrant leaves it, so its open has nothing to change while the lock is held
     db.pragma('journal_mode = WAL')
     parentPort.on('message', (m) => {
       if (m === 'hold') { db.exec('BEGIN IMMEDIATE'); parentPort.postMessage('held') }
       else { db.exec('ROLLBACK'); db.close(); parentPort.postMessage('released'); parentPort.close() }
     })`,
    { eval: true, workerData: file },
  )
  const answer = (what: string) => new Promise<void>((resolve) => worker.on('message', (m) => m === what && resolve()))
  return {
    hold: () => (worker.postMessage('hold'), answer('held')),
    release: () => (worker.postMessage('release'), answer('released')),
  }
}

describe('a SQLite store whose write lock another connection holds as a command starts', () => {
  let ws: CliWorkspace
  let file: string
  before(async () => {
    ws = await createCliWorkspace({ count: 10, edit: (raw) => (raw.store = { url: raw.store, busy_timeout_ms: 300 }) })
    file = join(ws.dir, 'warrant.db')
  })
  after(() => ws?.drop())

  test('a store still to migrate: exit 4, the store busy and store.busy_timeout_ms named, no internal error; then it migrates', async () => {
    const holder = lockHolder(file)
    await holder.hold()
    let refused
    try {
      refused = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'blocked'])
    } finally {
      await holder.release()
    }
    assert.doesNotMatch(refused.stderr, /internal error/)
    assert.match(refused.stderr, /SQLite store .* is busy: .*store\.busy_timeout_ms \(300 ms\)/)
    assert.equal(refused.code, 4, refused.stderr)
    const created = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'after'])
    assert.equal(created.code, 0, created.stderr)
  })

  test('a store with nothing to migrate: its migration reads and is done, never waiting for the lock', async () => {
    const store = await createStore({ url: `sqlite:${join(ws.dir, 'migrated.db')}`, busyTimeoutMs: 300 })
    assert.equal((await store.migrate()).error, undefined)
    const holder = lockHolder(join(ws.dir, 'migrated.db'))
    await holder.hold()
    try {
      // every command and serve migrates at start: one that only reads is not held up, or refused, by another's write
      assert.deepEqual(await store.migrate(), { applied: [] })
    } finally {
      await store.close()
      await holder.release()
    }
  })
})
