import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { createStore, type Store } from '../../src/store/index.js'
import { createTestStore } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'
import { notifierOn, type Receiver, operationFinished, skewed, until } from './skew-support.js'

/**
 * A receiver refuses a signed delivery whose `X-Warrant-Timestamp` is more than 5 minutes from its own clock
 * (`verifySignature`'s replay bound). Several `warrant serve` instances on one PostgreSQL store each stamped with
 * their own clock: every delivery an instance 10 minutes slow sent (first attempts, retries, deliveries it took over)
 * was refused by a receiver whose clock is right, retried and failed. The stamp is now the store's time (the
 * database's on PostgreSQL), read by the statement that records, claims or renews the delivery, plus the time since
 * on the process's monotonic clock; on SQLite, one machine, the process's.
 */
const MINUTE = 60_000
const EVENT = operationFinished('plan_stamp')
const retry = { max_attempts: 3, initial_backoff_ms: 200, max_backoff_ms: 200 }

async function storeSeconds(store: Store): Promise<number> {
  const row = await sql<{ s: number }>`select extract(epoch from statement_timestamp())::float8 as s`.execute(store.db)
  return Number(row.rows[0]!.s)
}

/** Each request's stamp, in seconds from the store's time as the request arrived. */
function stampsOff(receiver: Receiver, arrivals: readonly number[]): number[] {
  return receiver.received.map((r, i) => Number(r.headers['x-warrant-timestamp']) - arrivals[i]!)
}

describe('the X-Warrant-Timestamp of an instance whose clock runs 10 minutes slow, on a PostgreSQL store', () => {
  test('first attempts, retries and deliveries taken over are stamped with the store\'s time, within the receiver\'s 5 minutes', async () => {
    const { store: right, url, drop } = await createTestStore('postgres')
    const slow = await createStore({ url, clock: skewed(-10 * MINUTE) })
    const arrivals: number[] = []
    // the first request is refused, so the slow instance retries it
    const receiver = await startReceiver(async (_path, n) => {
      arrivals[n] = await storeSeconds(right)
      return n === 0 ? 503 : 204
    })
    try {
      const first = notifierOn(slow, receiver, retry)
      first.emit(EVENT)
      await until(() => receiver.received.length === 2, 'the first attempt and its retry')
      await first.flush()
      await first.close()
      // a second delivery, sent by an instance whose clock is right and left pending (as by one that died), is taken over by a slow one
      const other = notifierOn(right, receiver, retry)
      other.emit(operationFinished('plan_stamp_2'))
      await until(() => receiver.received.length === 3, 'the second delivery')
      await other.flush()
      await other.close()
      assert.equal(receiver.received.length, 3)
      await right.db.updateTable('webhook_deliveries').set({ state: 'pending', next_attempt_at: null, lease_until: null, lease_owner: null }).where('plan_id', '=', 'plan_stamp_2').execute()
      const taker = notifierOn(slow, receiver, retry)
      await taker.resume()
      await taker.flush()
      await taker.close()
      assert.equal(receiver.received.length, 4, 'the taken-over delivery was sent')
      for (const [i, off] of stampsOff(receiver, arrivals).entries()) assert.ok(Math.abs(off) <= 2, `request ${i} is stamped ${off} s from the store's time`)
    } finally {
      await receiver.close()
      await slow.close()
      await drop()
    }
  })
})
