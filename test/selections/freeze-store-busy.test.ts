import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import BetterSqlite3 from 'better-sqlite3'
import { startDemoGateway } from '../support/gateway-fixture.js'

const PATH = '/v1/resources/subscriptions/selections'

/**
 * A selection's members go to a SQLite store through the raw better-sqlite3 handle inside a kysely transaction
 * (member-writer.ts), past the statement wrapper that turns SQLITE_BUSY into `store_unavailable`. Another
 * connection (a CLI command, a `sqlite3` shell in BEGIN IMMEDIATE) takes the store's write lock once the first batch
 * of members is in (small pages: the walk reads a while between batches) and holds it past store.busy_timeout_ms
 * while the freeze writes the next: the answer must be
 * 503 `store_unavailable` saying busy and naming the key, and once the lock is let go the half-built selection
 * must be gone or `failed` with its reason, its members removed, its idempotency key free (a request that failed
 * leaves the key free). The lock is held by a worker thread: better-sqlite3 waits synchronously on this one.
 */
describe('a selection freeze whose member batch finds the SQLite store locked', () => {
  for (const retryAtOnce of [true, false])
  it(`is 503 store_unavailable naming store.busy_timeout_ms, and leaves nothing half-built (${retryAtOnce ? 'the request sent again at once' : 'nobody asking'})`, async () => {
    const fx = await startDemoGateway({ store: 'sqlite', count: 6_000, edit: (raw) => (raw.store = { url: raw.store, busy_timeout_ms: 200 }) })
    const file = fx.storeUrl.slice('sqlite:'.length)
    const holder = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads')
       const db = new (require('better-sqlite3'))(workerData)
       db.pragma('busy_timeout = 20000')
       const members = db.prepare('select count(*) as n from selection_members')
       // once the first batch is in, as the walk reads the next one's pages, take the write lock and keep it
       const poll = () => {
         if (members.get().n === 0) return setTimeout(poll, 1)
         db.exec('BEGIN IMMEDIATE')
         parentPort.postMessage({ held: members.get().n })
       }
       parentPort.postMessage('polling')
       poll()
       parentPort.on('message', () => { db.exec('ROLLBACK'); db.close(); parentPort.postMessage('released'); parentPort.close() })`,
      { eval: true, workerData: file },
    )
    const message = (what: string) => new Promise<void>((resolve) => holder.on('message', (m) => m === what && resolve()))
    const held = new Promise<number>((resolve) => holder.on('message', (m) => typeof m === 'object' && resolve(m.held)))
    // the freeze starts only once the worker watches: it takes a few tens of ms to start, the freeze about as long
    await message('polling')
    const store = new BetterSqlite3(file, { readonly: true })
    try {
      const answer = await fx.as('agent')('POST', PATH, { filter: {}, page_size: 20 }, { 'idempotency-key': 'busy-freeze' })
      // members were written before the lock was taken: they are what must not be left behind
      assert.ok((await held) >= 1000, 'the lock was taken before the first batch')
      assert.equal(answer.status, 503, JSON.stringify(answer.body).slice(0, 400))
      assert.equal(answer.body.error.code, 'store_unavailable')
      assert.match(answer.body.error.message, /SQLite store .* is busy/)
      assert.match(answer.body.error.message, /store\.busy_timeout_ms \(200 ms\)/)

      const released = message('released')
      holder.postMessage('release')
      await released
      if (!retryAtOnce)
        for (const deadline = Date.now() + 10_000; ; ) {
          const left = store.prepare("select state, (select count(*) from selection_members) as members from selections").all() as { state: string; members: number }[]
          if (left.every((r) => r.state === 'failed' && r.members === 0)) break
          assert.ok(Date.now() < deadline, `10 s after the lock was let go, with nobody asking: ${JSON.stringify(left)}`)
          await new Promise((r) => setTimeout(r, 50))
        }
      // the key is free at once (a request that failed leaves it free): the same request, sent again as soon as the
      // lock is let go, builds the selection
      const again = await fx.as('agent')('POST', PATH, { filter: {}, page_size: 20 }, { 'idempotency-key': 'busy-freeze' })
      assert.equal(again.status, 201, JSON.stringify(again.body).slice(0, 400))
      assert.equal(again.body.count, 6_000)
      const failed = store.prepare('select id, state, failure, idempotency_key from selections where id != ?').all(again.body.selection_id) as {
        id: string
        state: string
        failure: string | null
        idempotency_key: string | null
      }[]
      // the one that failed is gone, or failed saying why; nothing of it is left
      for (const row of failed) {
        assert.equal(row.state, 'failed', JSON.stringify(row))
        assert.match(row.failure ?? '', /is busy.*store\.busy_timeout_ms/, JSON.stringify(row))
        assert.equal(row.idempotency_key, null)
      }
      assert.equal((store.prepare('select count(*) as n from selection_members where selection_id != ?').get(again.body.selection_id) as { n: number }).n, 0)
      assert.equal((store.prepare('select count(*) as n from selection_exclusions').get() as { n: number }).n, 0)
    } finally {
      store.close()
      await holder.terminate()
      await fx.close()
    }
  })
})
