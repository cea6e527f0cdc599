import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { parseConfig } from '../../src/config/index.js'
import { createStore } from '../../src/store/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { startRelay } from '../support/pg-relay.js'
import { TEST_POSTGRES_ADMIN_URL, createTestPostgresDatabase } from '../support/stores.js'

/**
 * A PostgreSQL store whose server stops answering after a statement was sent (a failover, a proxy or a NAT that
 * drops the connection silently) held that request forever: pg sets no client-side time limit on a query, and the
 * socket, still open, never errs. `store.statement_timeout_ms` (PostgreSQL only; default 5 minutes, since some store
 * statements are long: removing a million members, renumbering them) bounds it: the request is 503
 * `store_unavailable` naming the key, and the connection, no longer trustworthy, is dropped. Work done as many
 * statements (an export or an audit export, read a page at a time; a freeze, a batch at a time) is not cut by it.
 */

function gatewayThrough(port: number, statementTimeoutMs: number) {
  return startDemoGateway({
    store: 'postgres',
    count: 50,
    edit: (raw) => {
      const url = new URL(raw.store)
      url.port = String(port)
      raw.store = { url: url.toString(), statement_timeout_ms: statementTimeoutMs, connect_timeout_ms: 1_000 }
    },
  })
}

describe('a PostgreSQL store that stops answering mid-query', () => {
  it('the request is 503 store_unavailable naming store.statement_timeout_ms within it, not a wait without end; the store answers again after', async () => {
    const relay = await startRelay(new URL(TEST_POSTGRES_ADMIN_URL))
    const fx = await gatewayThrough(relay.port, 1_000)
    try {
      const agent = fx.as('agent')
      assert.equal((await agent('GET', '/v1/resources')).status, 200)
      relay.silence()
      const started = Date.now()
      const answer = await Promise.race([
        agent('GET', '/v1/resources'),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000).unref()),
      ])
      assert.ok(answer !== null, 'no answer 30 s after the store fell silent')
      assert.equal(answer.status, 503, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, 'store_unavailable')
      assert.match(answer.body.error.message, /PostgreSQL store .* did not answer .*store\.statement_timeout_ms \(1000 ms\)/)
      // the statement's 1 s, then the request's audit record, which waits for a new connection (connect_timeout_ms)
      assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`)
      // the silent connection was dropped, not handed to the next request, which is served once the server answers
      relay.speak()
      assert.equal((await agent('GET', '/v1/resources')).status, 200)
    } finally {
      await relay.cut()
      await fx.close()
    }
  })

  it('bounds each statement, never work made of many: statements that take longer than it together complete', async () => {
    const db = await createTestPostgresDatabase()
    const store = await createStore({ url: db.url, statementTimeoutMs: 1_000 })
    try {
      // as an export reads page after page, or a transaction writes batch after batch: 2 s in all, in one transaction
      const slept = await store.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 4; i++) await sql`select pg_sleep(0.5)`.execute(trx)
        return (await sql<{ n: number }>`select 1 as n`.execute(trx)).rows[0]!.n
      })
      assert.equal(slept, 1)
      // one statement longer than it is refused, naming the key; the store answers the next one on another connection
      await assert.rejects(sql`select pg_sleep(2)`.execute(store.db), (error: any) => {
        assert.equal(error.code, 'store_unavailable', String(error))
        assert.match(error.message, /store\.statement_timeout_ms \(1000 ms\)/)
        return true
      })
      assert.equal((await sql<{ n: number }>`select 2 as n`.execute(store.db)).rows[0]!.n, 2)
    } finally {
      await store.close()
      await db.drop()
    }
  })

  it('store.statement_timeout_ms is validated and refused on a sqlite: store, naming the full key', () => {
    const minimal = { resources: {} }
    assert.equal(parseConfig({ ...minimal, store: { url: 'postgres://u@127.0.0.1/w', statement_timeout_ms: 60_000 } }).store.statement_timeout_ms, 60_000)
    for (const [store, message] of [
      [{ url: 'sqlite:./w.db', statement_timeout_ms: 60_000 }, /store\.statement_timeout_ms: .*PostgreSQL store only/],
      [{ url: 'postgres://u@127.0.0.1/w', statement_timeout_ms: 999 }, /store\.statement_timeout_ms: .*1000/],
      [{ url: 'postgres://u@127.0.0.1/w', statement_timeout_ms: 3_600_001 }, /store\.statement_timeout_ms: .*3600000/],
      [{ url: 'postgres://u@127.0.0.1/w', statement_timeout_ms: 1.5 }, /store\.statement_timeout_ms: /],
    ] as const)
      assert.throws(() => parseConfig({ ...minimal, store }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_request')
        assert.match(error.message, message)
        return true
      })
  })
})
