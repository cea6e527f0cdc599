import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { sql } from 'kysely'
import { createTestStore, TEST_POSTGRES_ADMIN_URL } from '../support/stores.js'

/**
 * The store's pool handled the 'error' of an idle connection (src/store/store.ts: "unhandled, that would end
 * the process"), but not of one checked out: a backend killed (pg_terminate_backend, a failover, a restart)
 * while the store holds its connection in a transaction makes pg emit 'error' on a client nobody listens to,
 * an uncaught exception that ends `warrant serve` (every operation it runs stops; the crash-recovery path then
 * turns in-flight targets unknown). It should be the transaction's error, handled like any other store error.
 */
test('a store connection killed while checked out (in a transaction) is not an uncaught exception', async () => {
  const uncaught: unknown[] = []
  const listener = (e: unknown) => uncaught.push(e)
  process.on('uncaughtException', listener)
  const { store, drop } = await createTestStore('postgres')
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
  await admin.connect()
  try {
    const result = await store.db
      .transaction()
      .execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)
        await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid])
        await new Promise((r) => setTimeout(r, 300))
        await sql`select 1`.execute(trx)
        return 'committed'
      })
      .catch((error: unknown) => `rejected: ${(error as Error).message}`)
    await new Promise((r) => setTimeout(r, 300))
    assert.match(result, /^rejected/, 'the transaction fails')
    assert.deepEqual(
      uncaught.map((e) => (e as Error).message),
      [],
      'the killed connection surfaced as an uncaught exception (the process would exit)',
    )
  } finally {
    process.off('uncaughtException', listener)
    await admin.end()
    await drop().catch(() => undefined)
  }
})
