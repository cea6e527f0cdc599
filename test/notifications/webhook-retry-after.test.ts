import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { createNotifier, type NotificationEvent, type Notifications } from '../../src/notifications/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { until } from '../support/until.js'

/**
 * A receiver that says how long to wait (429 Too Many Requests, 503 Unavailable, with Retry-After in seconds or as
 * an HTTP date) gets its next attempt no sooner, within a bound; the delivery's record says what it asked and what
 * Warrant does. The configured backoff here is 10 ms: a retry sooner than the receiver asked is the backoff's.
 */
const EVENT: NotificationEvent = {
  kind: 'operation.halted',
  plan: { plan_id: 'plan_retry_after', resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 5 },
  operation_id: 'op_retry_after',
  state: 'halted',
  counts: { succeeded: 2, pending: 3 },
  halt_rule: 'rate_limited',
}
const silent = { warn: () => undefined, error: () => undefined }

type Answer = { status: number; headers?: Record<string, string> }

/** A receiver answering the nth request `answers[n]` (the last one after that), noting when each came. */
async function startReceiver(answers: readonly Answer[]) {
  const at: number[] = []
  const server = createServer((req, res) =>
    req.resume().on('end', () => {
      const answer = answers[Math.min(at.length, answers.length - 1)]!
      at.push(Date.now())
      res.writeHead(answer.status, answer.headers).end()
    }),
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    at,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

for (const kind of STORE_KINDS) {
  describe(`Retry-After on 429 and 503 is honoured (${kind} store)`, () => {
    /** A notifier sending EVENT to `answers`; `body` gets it once the first attempt is recorded. */
    async function afterFirstAttempt(answers: readonly Answer[], body: (n: Notifications, r: Awaited<ReturnType<typeof startReceiver>>) => Promise<void>, backoffMs = 10) {
      const { store, drop } = await createTestStore(kind)
      const receiver = await startReceiver(answers)
      const notifier = createNotifier({
        config: { webhooks: [{ name: 'reviewers', url: receiver.url, format: 'slack' }], retry: { max_attempts: 3, initial_backoff_ms: backoffMs, max_backoff_ms: backoffMs }, timeout_ms: 30_000 },
        store,
        log: silent,
        baseUrl: 'https://warrant.example',
        closeGraceMs: 100,
      })
      try {
        notifier.emit(EVENT)
        await until(async () => ((await notifier.deliveries({ plan_id: 'plan_retry_after' }))[0]?.attempts ?? 0) >= 1, 'the first attempt recorded')
        await body(notifier, receiver)
      } finally {
        await notifier.close()
        await receiver.close()
        await drop()
      }
    }
    const only = async (n: Notifications) => (await n.deliveries({ plan_id: 'plan_retry_after' }))[0]!

    test('429 with Retry-After: 2 (seconds): the next attempt comes 2 s later, not after the 10 ms backoff; the record says why', () =>
      afterFirstAttempt([{ status: 429, headers: { 'retry-after': '2' } }, { status: 204 }], async (notifier, receiver) => {
        const waiting = await only(notifier)
        assert.deepEqual([waiting.state, waiting.last_status], ['pending', 429])
        assert.equal(waiting.last_error, 'the receiver answered HTTP 429 and asked to wait 2 s (Retry-After); the next attempt waits for it')
        const dueIn = Date.parse(waiting.next_attempt_at!) - receiver.at[0]!
        assert.ok(dueIn >= 1900 && dueIn < 3000, `next attempt due ${dueIn} ms after the first`)
        await notifier.flush()
        assert.equal(receiver.at.length, 2)
        assert.ok(receiver.at[1]! - receiver.at[0]! >= 1950, `retried after ${receiver.at[1]! - receiver.at[0]!} ms`)
        assert.deepEqual([(await only(notifier)).state, (await only(notifier)).attempts], ['delivered', 2])
      }))

    test('503 with Retry-After as an HTTP date: read against the response\'s own Date, so the two clocks need not agree', () => {
      // the receiver's clock is an hour behind: against ours the date is long past, against its Date it is 2 s ahead
      const date = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000)
      const headers = { date: date.toUTCString(), 'retry-after': new Date(date.getTime() + 2000).toUTCString() }
      return afterFirstAttempt([{ status: 503, headers }, { status: 204 }], async (notifier, receiver) => {
        assert.equal((await only(notifier)).last_error, 'the receiver answered HTTP 503 and asked to wait 2 s (Retry-After); the next attempt waits for it')
        await notifier.flush()
        assert.ok(receiver.at[1]! - receiver.at[0]! >= 1950, `retried after ${receiver.at[1]! - receiver.at[0]!} ms`)
      })
    })

    test('a Retry-After past the bound waits the bound (1 hour), and says so; nothing is sent meanwhile', () =>
      afterFirstAttempt([{ status: 429, headers: { 'retry-after': '86400' } }, { status: 204 }], async (notifier, receiver) => {
        const waiting = await only(notifier)
        assert.equal(waiting.last_error, 'the receiver answered HTTP 429 and asked to wait 86400 s (Retry-After); the next attempt waits the 3600 s maximum')
        const dueIn = Date.parse(waiting.next_attempt_at!) - receiver.at[0]!
        assert.ok(dueIn >= 3_599_000 && dueIn < 3_601_000, `next attempt due ${dueIn} ms after the first`)
        await new Promise((r) => setTimeout(r, 300))
        assert.equal(receiver.at.length, 1)
      }))

    test('a Retry-After that is neither seconds nor a date is named, and the backoff (here 1 s) applies', () =>
      afterFirstAttempt(
        [{ status: 503, headers: { 'retry-after': 'soon' } }, { status: 204 }],
        async (notifier, receiver) => {
          assert.equal((await only(notifier)).last_error, 'the receiver answered HTTP 503; its Retry-After "soon" is neither seconds nor an HTTP date: the backoff applies')
          await notifier.flush()
          assert.equal((await only(notifier)).state, 'delivered')
          const waited = receiver.at[1]! - receiver.at[0]!
          assert.ok(waited >= 950 && waited < 2500, `retried after ${waited} ms`)
        },
        1000,
      ))

    test('a Retry-After shorter than the backoff (1 s against 2 s): the backoff applies, and the record says so', () =>
      afterFirstAttempt(
        [{ status: 429, headers: { 'retry-after': '1' } }, { status: 204 }],
        async (notifier, receiver) => {
          assert.equal((await only(notifier)).last_error, "the receiver answered HTTP 429 and asked to wait 1 s (Retry-After); the backoff's 2 s is longer")
          await notifier.flush()
          assert.ok(receiver.at[1]! - receiver.at[0]! >= 1950, `retried after ${receiver.at[1]! - receiver.at[0]!} ms`)
        },
        2000,
      ))

    test('a Retry-After on another status (500) is not a request to wait: the backoff applies', () =>
      afterFirstAttempt([{ status: 500, headers: { 'retry-after': '30' } }, { status: 204 }], async (notifier, receiver) => {
        await notifier.flush()
        assert.equal(receiver.at.length, 2)
        assert.ok(receiver.at[1]! - receiver.at[0]! < 1000)
      }))
  })
}

