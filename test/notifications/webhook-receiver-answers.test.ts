import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { createNotifier, type NotificationEvent } from '../../src/notifications/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'

const EVENT: NotificationEvent = {
  kind: 'plan.awaiting_review',
  plan: { plan_id: 'plan_answers', resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 5 },
  reviewers_needed: 1,
  proposed_by: 'ci-agent',
  expires_at: null,
}
const silent = { warn: () => undefined, error: () => undefined }

/** Sends EVENT to `url` (4 attempts, short backoff) on a fresh store, and answers how its delivery ended. */
async function deliverTo(kind: (typeof STORE_KINDS)[number], url: string) {
  const { store, drop } = await createTestStore(kind)
  try {
    const notifier = createNotifier({
      config: { webhooks: [{ name: 'reviewers', url, secret: { env: 'HOOK_SECRET' }, format: 'json' }], retry: { max_attempts: 4, initial_backoff_ms: 10, max_backoff_ms: 20 }, timeout_ms: 30_000 },
      store,
      log: silent,
      baseUrl: 'https://warrant.example',
      env: { HOOK_SECRET: 'whsec-answers' },
    })
    notifier.emit(EVENT)
    await notifier.flush()
    const [delivery] = await notifier.deliveries({ plan_id: 'plan_answers' })
    await notifier.close()
    return delivery!
  } finally {
    await drop()
  }
}

for (const kind of STORE_KINDS) {
  describe(`what a receiver answers decides a delivery (${kind} store)`, () => {
    test('410 Gone: the receiver says the hook is gone for good; failed at once, not retried', async () => {
      const receiver = await startReceiver(() => 410)
      try {
        const delivery = await deliverTo(kind, `${receiver.url}/hook`)
        assert.equal(receiver.received.length, 1, 'not retried')
        assert.equal(delivery.state, 'failed')
        assert.equal(delivery.attempts, 1)
        assert.equal(delivery.last_status, 410)
        assert.match(delivery.last_error ?? '', /HTTP 410 \(gone: not retried\)/)
      } finally {
        await receiver.close()
      }
    })

    /** A receiver answering `status` with `location`, and the host that Location names (which must get nothing). */
    async function redirecting(status: number, location: (elsewhere: string) => string) {
      const elsewhere = await startReceiver(() => 204)
      let requests = 0
      const server = createServer((req, res) =>
        req.resume().on('end', () => {
          requests++
          res.writeHead(status, { location: location(elsewhere.url) }).end()
        }),
      )
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        elsewhere,
        requests: () => requests,
        close: async () => {
          server.closeAllConnections()
          await new Promise((r) => server.close(r))
          await elsewhere.close()
        },
      }
    }

    for (const status of [301, 308]) {
      test(`${status}, a permanent redirect: failed at once, not followed, the reason naming where it points (its host, never its path)`, async () => {
        const receiver = await redirecting(status, (elsewhere) => `${elsewhere}/T0/B0/xoxb-new-secret-path`)
        try {
          const delivery = await deliverTo(kind, receiver.url)
          assert.equal(receiver.elsewhere.received.length, 0, 'nothing reached the host the redirect named')
          assert.equal(receiver.requests(), 1, 'not retried: the receiver said the move is permanent')
          assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status], ['failed', 1, status])
          assert.equal(
            delivery.last_error,
            `the receiver answered HTTP ${status}, a permanent redirect to ${receiver.elsewhere.url}/… (not followed: the signed body goes only to the configured URL; configure the new one; not retried)`,
          )
          assert.ok(!delivery.last_error!.includes('xoxb-new-secret-path'), "the new URL's path stays out of the record")
        } finally {
          await receiver.close()
        }
      })
    }

    for (const status of [302, 303, 307]) {
      test(`${status}, a temporary redirect: not followed (the signed body never reaches the host it names), retried at the configured URL`, async () => {
        const receiver = await redirecting(status, (elsewhere) => `${elsewhere}/steal`)
        try {
          const delivery = await deliverTo(kind, receiver.url)
          assert.equal(receiver.elsewhere.received.length, 0, 'nothing reached the host the redirect named')
          assert.equal(receiver.requests(), 4, 'every attempt went to the configured URL')
          assert.deepEqual([delivery.state, delivery.attempts, delivery.last_status], ['failed', 4, status])
          assert.equal(delivery.last_error, `the receiver answered HTTP ${status}, a temporary redirect to ${receiver.elsewhere.url}/… (not followed: the signed body goes only to the configured URL)`)
        } finally {
          await receiver.close()
        }
      })
    }

    test('a redirect without a Location, or to a path on the same host, says so', async () => {
      const bare = createServer((req, res) => req.resume().on('end', () => res.writeHead(308).end()))
      await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r))
      const sameHost = await redirecting(301, () => '/moved/here')
      try {
        const none = await deliverTo(kind, `http://127.0.0.1:${(bare.address() as AddressInfo).port}/hook`)
        assert.equal(none.last_error, 'the receiver answered HTTP 308, a permanent redirect, naming no Location (not followed: the signed body goes only to the configured URL; configure the new one; not retried)')
        const same = await deliverTo(kind, sameHost.url)
        assert.equal(same.last_error, `the receiver answered HTTP 301, a permanent redirect to ${new URL(sameHost.url).origin}/… (not followed: the signed body goes only to the configured URL; configure the new one; not retried)`)
      } finally {
        bare.closeAllConnections()
        await new Promise((r) => bare.close(r))
        await sameHost.close()
      }
    })
  })
}
