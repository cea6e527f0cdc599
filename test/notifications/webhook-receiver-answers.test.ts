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

    test('a redirect to another host is not followed: the signed body never reaches it', async () => {
      const elsewhere = await startReceiver(() => 204)
      const server = createServer((req, res) => req.resume().on('end', () => res.writeHead(307, { location: `${elsewhere.url}/steal` }).end()))
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      try {
        const delivery = await deliverTo(kind, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)
        assert.equal(elsewhere.received.length, 0, 'nothing reached the host the redirect named')
        assert.equal(delivery.state, 'failed')
        assert.match(delivery.last_error ?? '', /HTTP 307 \(redirects are not followed\)/)
      } finally {
        server.closeAllConnections()
        await new Promise((r) => server.close(r))
        await elsewhere.close()
      }
    })
  })
}
