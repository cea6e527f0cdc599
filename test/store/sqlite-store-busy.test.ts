import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { parseConfig } from '../../src/config/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'

/**
 * The SQLite store waits for another connection's write lock (a CLI command, a backup, a `sqlite3` shell left
 * in a transaction) up to its busy timeout, synchronously: better-sqlite3 blocks the event loop meanwhile, so
 * /health and every request wait with it. The timeout was 5 s, fixed; it is now `store.busy_timeout_ms`
 * (0 to 30000, SQLite stores only), and a store statement that still finds the lock held is 503
 * `store_unavailable` saying the store is busy and naming the key, not a 500 "internal error".
 */
describe('the SQLite store busy timeout', () => {
  it('is store.busy_timeout_ms, validated, and refused on a PostgreSQL store, naming the full key', () => {
    const minimal = { resources: {} }
    assert.doesNotThrow(() => parseConfig({ ...minimal, store: { url: 'sqlite:./w.db', busy_timeout_ms: 250 } }))
    assert.doesNotThrow(() => parseConfig({ ...minimal, store: 'sqlite:./w.db' }))
    for (const [store, message] of [
      [{ url: 'sqlite:./w.db', busy_timeout_ms: 60_000 }, /store\.busy_timeout_ms: .*30000/],
      [{ url: 'sqlite:./w.db', busy_timeout_ms: -1 }, /store\.busy_timeout_ms: /],
      [{ url: 'sqlite:./w.db', busy_timeout_ms: 1.5 }, /store\.busy_timeout_ms: /],
      [{ url: 'postgres://u@127.0.0.1/w', busy_timeout_ms: 100 }, /store\.busy_timeout_ms: .*sqlite/],
      [{ url: 'sqlite:./w.db', busy_timeout: 100 }, /store\.busy_timeout: unknown key "busy_timeout"; .*busy_timeout_ms/],
    ] as const)
      assert.throws(
        () => parseConfig({ ...minimal, store }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'invalid_request')
          assert.match(error.message, message)
          return true
        },
      )
  })

  it('a write that finds the lock held past the timeout is 503 store_unavailable saying busy, within the configured wait', async () => {
    const fx = await startDemoGateway({ store: 'sqlite', count: 50, edit: (raw) => (raw.store = { url: raw.store, busy_timeout_ms: 200 }) })
    const holder = new BetterSqlite3(fx.storeUrl.slice('sqlite:'.length))
    try {
      holder.exec('BEGIN IMMEDIATE')
      const started = Date.now()
      const answer = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
      const waited = Date.now() - started
      assert.equal(answer.status, 503, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, 'store_unavailable')
      assert.match(answer.body.error.message, /SQLite store .* is busy/)
      assert.match(answer.body.error.message, /store\.busy_timeout_ms \(200 ms\)/)
      assert.ok(waited < 5_000, `answered after ${waited} ms: the configured 200 ms was not the wait`)
      holder.exec('ROLLBACK')
      const again = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
      assert.equal(again.status, 201, JSON.stringify(again.body))
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
      await fx.close()
    }
  })
})
