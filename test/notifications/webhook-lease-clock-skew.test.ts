import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import type { Notifications } from '../../src/notifications/index.js'
import { createStore, type Store } from '../../src/store/index.js'
import { createTestStore } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'
import { notifierOn, type Receiver, type Retry, operationFinished, skewed, until } from './skew-support.js'

/**
 * Several `warrant serve` instances on one PostgreSQL store, on machines whose clocks disagree. A delivery's lease was
 * written and judged on each process's clock, and the same column held the next attempt's due time: an instance whose
 * clock ran ahead took a delivery another was sending (the receiver got it twice at once), one whose clock ran behind
 * wrote leases already over for the others, and a retry released by a stopping gateway was sent at once by an
 * instance ahead, long before its backoff was over. The instances here share one database and differ only in their
 * injected clocks, by an hour (more than any delivery's lease). SQLite is one machine, one clock: not run there.
 */
const HOUR = 3_600_000
const EVENT = operationFinished('plan_skew')
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One PostgreSQL database, two instances on it (`holder`'s clock and `other`'s), and a receiver answering `answer`.
 * The receiver counts requests per delivery id.
 */
async function twoInstances(
  clocks: { holder: number; other: number },
  answer: Parameters<typeof startReceiver>[0],
  body: (holder: Store, other: Store, receiver: Receiver) => Promise<void>,
): Promise<void> {
  const { store: holder, url, drop } = await createTestStore('postgres', { clock: skewed(clocks.holder) })
  const other = await createStore({ url, clock: skewed(clocks.other) })
  const receiver = await startReceiver(answer)
  try {
    await body(holder, other, receiver)
  } finally {
    await receiver.close()
    await other.close()
    await drop()
  }
}

const perDelivery = (receiver: Receiver) => {
  const counts = new Map<string, number>()
  for (const r of receiver.received) counts.set(String(r.headers['x-warrant-delivery']), (counts.get(String(r.headers['x-warrant-delivery'])) ?? 0) + 1)
  return [...counts.values()]
}

const retryAfter = (ms: number): Retry => ({ max_attempts: 3, initial_backoff_ms: ms, max_backoff_ms: ms })

/**
 * A notifier on `store` that sent the event once (the receiver refused it) and waits `backoffMs` to retry; with
 * `stop`, closed (the delivery released to its due time).
 */
async function refusedOnce(store: Store, receiver: Receiver, backoffMs: number, stop: boolean): Promise<Notifications> {
  const notifier = notifierOn(store, receiver, retryAfter(backoffMs))
  notifier.emit(EVENT)
  await until(async () => (await notifier.deliveries({ plan_id: 'plan_skew' }))[0]?.attempts === 1, 'the first attempt recorded')
  if (stop) await notifier.close()
  return notifier
}

/** The receiver had the one delivery id `times` times, and the store says delivered after as many attempts; closes the notifiers. */
async function assertDelivered(receiver: Receiver, times: number, message: string, ...notifiers: Notifications[]): Promise<void> {
  assert.deepEqual(perDelivery(receiver), [times], message)
  const [delivery] = await notifiers[0]!.deliveries({ plan_id: 'plan_skew' })
  assert.deepEqual([delivery!.state, delivery!.attempts], ['delivered', times])
  for (const notifier of notifiers) await notifier.close()
}

describe('webhook delivery leases on a PostgreSQL store shared by instances whose clocks disagree', () => {
  for (const [name, clocks] of [
    ['an instance whose clock runs an hour ahead does not send a delivery another is sending', { holder: 0, other: HOUR }],
    ['a delivery claimed by an instance whose clock runs an hour behind is live to the others', { holder: -HOUR, other: 0 }],
  ] as const) {
    test(name, () => {
      let answerFirst!: (status: number) => void
      const firstAnswer = new Promise<number>((resolve) => (answerFirst = resolve))
      return twoInstances(clocks, (_path, n) => (n === 0 ? firstAnswer : 204), async (holderStore, otherStore, receiver) => {
        const retry = { max_attempts: 2, initial_backoff_ms: 1000, max_backoff_ms: 1000 }
        const holder = notifierOn(holderStore, receiver, retry)
        const other = notifierOn(otherStore, receiver, retry)
        holder.emit(EVENT)
        await until(() => receiver.received.length === 1, 'the holder sending the delivery')
        await other.resume()
        await pause(300)
        answerFirst(204)
        await holder.flush()
        await other.flush()
        await assertDelivered(receiver, 1, 'the receiver got the delivery once, from the holder', holder, other)
      })
    })
  }

  test('a retry released by a stopping gateway is not sent early by an instance whose clock runs an hour ahead, and is sent once due', () =>
    twoInstances({ holder: 0, other: HOUR }, (_path, n) => (n === 0 ? 503 : 204), async (holderStore, otherStore, receiver) => {
      const retry = retryAfter(1500)
      await refusedOnce(holderStore, receiver, 1500, true)
      const other = notifierOn(otherStore, receiver, retry)
      await other.resume()
      await other.flush()
      assert.equal(receiver.received.length, 1, 'the retry was not sent before its backoff was over')
      await pause(1700)
      await other.resume()
      await other.flush()
      await assertDelivered(receiver, 2, 'retried once it was due, same delivery id', other)
    }))

  test('an instance whose clock runs an hour behind sends a released retry once it is due, not an hour later', () =>
    twoInstances({ holder: 0, other: -HOUR }, (_path, n) => (n === 0 ? 503 : 204), async (holderStore, otherStore, receiver) => {
      const retry = retryAfter(300)
      await refusedOnce(holderStore, receiver, 300, true)
      await pause(500)
      const other = notifierOn(otherStore, receiver, retry)
      await other.resume()
      await other.flush()
      await assertDelivered(receiver, 2, 'retried by the instance behind once due', other)
    }))

  test('a holder whose lease lapsed while it waited to retry sends nothing once another took the delivery', () =>
    twoInstances({ holder: 0, other: 0 }, (_path, n) => (n === 0 ? 503 : 204), async (holderStore, otherStore, receiver) => {
      const retry = retryAfter(1500)
      const holder = await refusedOnce(holderStore, receiver, 1500, false)
      // the holder stalls past its lease (a blocked event loop, a paused VM): its lease and the due time are over
      const past = sql<string>`to_char((statement_timestamp() - interval '1 second') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      await otherStore.db.updateTable('webhook_deliveries').set({ lease_until: past, next_attempt_at: past }).execute()
      const other = notifierOn(otherStore, receiver, retry)
      await other.resume()
      await other.flush()
      assert.equal(receiver.received.length, 2, 'the other instance retried it')
      await pause(1800)
      await holder.flush()
      await assertDelivered(receiver, 2, 'the holder, awake again, did not send it a third time', holder, other)
    }))

  test('two instances sweeping at once send a released delivery once', () =>
    twoInstances({ holder: 0, other: 0 }, (_path, n) => (n === 0 ? 503 : 204), async (holderStore, otherStore, receiver) => {
      const retry = retryAfter(200)
      await refusedOnce(holderStore, receiver, 200, true)
      await pause(300)
      const a = notifierOn(holderStore, receiver, retry)
      const b = notifierOn(otherStore, receiver, retry)
      await Promise.all([a.resume(), b.resume(), a.resume(), b.resume()])
      await Promise.all([a.flush(), b.flush()])
      await assertDelivered(receiver, 2, 'the first attempt and one retry', a, b)
    }))
})
