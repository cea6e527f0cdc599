import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createNotifier, type NotificationEvent, type Notifications } from '../../src/notifications/index.js'
import type { Store } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'

const EVENT: NotificationEvent = {
  kind: 'operation.halted',
  plan: { plan_id: 'plan_restart', resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 40 },
  operation_id: 'op_restart',
  state: 'halted',
  counts: { succeeded: 3, pending: 37 },
  halt_rule: 'authorization_failure',
}
const silent = { warn: () => undefined, error: () => undefined }
const never = () => new Promise<number>(() => undefined)

/** One gateway's notifier on `store`, sending to `url`; the secret is read from its env, as serve reads it. */
function gatewayNotifier(store: Store, url: string, retry: { max_attempts: number; initial_backoff_ms: number; max_backoff_ms: number }): Notifications {
  return createNotifier({
    config: { webhooks: [{ name: 'reviewers', url, secret: { env: 'HOOK_SECRET' }, format: 'json' }], retry, timeout_ms: 30_000 },
    store,
    log: silent,
    baseUrl: 'https://warrant.example',
    env: { HOOK_SECRET: 'whsec-restart' },
    closeGraceMs: 100,
  })
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await check()); waited += 20) {
    if (waited > 20_000) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** A fresh store and a receiver answering `answer`, both removed after `body`. */
async function onStoreWithReceiver(kind: (typeof STORE_KINDS)[number], answer: Parameters<typeof startReceiver>[0], body: (store: Store, receiver: Receiver) => Promise<void>): Promise<void> {
  const { store, drop } = await createTestStore(kind)
  const receiver = await startReceiver(answer)
  try {
    await body(store, receiver)
  } finally {
    await receiver.close()
    await drop()
  }
}

/** The delivery, as the next gateway left it: delivered, after `attempts` counted attempts. */
async function assertDelivered(next: Notifications, attempts: number): Promise<void> {
  const [delivery] = await next.deliveries({ plan_id: 'plan_restart' })
  assert.equal(delivery!.state, 'delivered')
  assert.equal(delivery!.attempts, attempts)
  await next.close()
}

/**
 * A serve restart must not lose a reviewer's notification, nor call it failed: the receiver was not at fault when
 * the gateway stopped mid-request or between retries. The delivery stays pending, its lease released, and the next
 * gateway sends it (same delivery id) as soon as it is due, not minutes later when a dead process's lease runs out.
 */
for (const kind of STORE_KINDS) {
  describe(`webhook deliveries across a restart of the gateway (${kind} store)`, () => {
    test('stopped while the receiver had not answered (its last attempt): pending, not failed, and the next gateway sends it at once', () =>
      onStoreWithReceiver(kind, (_path, n) => (n === 0 ? never() : 204), async (store, receiver) => {
        const first = gatewayNotifier(store, `${receiver.url}/hook`, { max_attempts: 1, initial_backoff_ms: 10, max_backoff_ms: 10 })
        first.emit(EVENT)
        await until(() => receiver.received.length === 1, 'the first request')
        await first.close()
        const [delivery] = await first.deliveries({ plan_id: 'plan_restart' })
        assert.equal(delivery!.state, 'pending', delivery!.last_error ?? '')
        assert.equal(delivery!.attempts, 0, 'an attempt the gateway cut short is not counted against the receiver')
        assert.match(delivery!.last_error ?? '', /gateway stopped/)

        const second = gatewayNotifier(store, `${receiver.url}/hook`, { max_attempts: 1, initial_backoff_ms: 10, max_backoff_ms: 10 })
        await second.resume()
        await second.flush()
        assert.equal(receiver.received.length, 2, 'sent again by the next gateway, without waiting for a lease to expire')
        assert.equal(receiver.received[1]!.headers['x-warrant-delivery'], receiver.received[0]!.headers['x-warrant-delivery'], 'the same delivery id: the receiver de-duplicates')
        await assertDelivered(second, 1)
      }))

    test('stopped while waiting to retry: the next gateway retries when the backoff is over', () =>
      onStoreWithReceiver(kind, (_path, n) => (n === 0 ? 503 : 204), async (store, receiver) => {
        const retry = { max_attempts: 3, initial_backoff_ms: 300, max_backoff_ms: 300 }
        const first = gatewayNotifier(store, `${receiver.url}/hook`, retry)
        first.emit(EVENT)
        await until(async () => (await first.deliveries({ plan_id: 'plan_restart' }))[0]?.attempts === 1, 'the first attempt recorded')
        await first.close()
        assert.equal(receiver.received.length, 1)
        const second = gatewayNotifier(store, `${receiver.url}/hook`, retry)
        await new Promise((r) => setTimeout(r, 400))
        await second.resume()
        await second.flush()
        assert.equal(receiver.received.length, 2, 'retried by the next gateway once the backoff was over')
        await assertDelivered(second, 2)
      }))
  })
}
