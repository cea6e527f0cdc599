import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, test } from 'node:test'
import { createNotifier, verifySignature } from '../../src/notifications/index.js'
import { createTestStore } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'

const OLD = 'whsec-old-0123456789'
const NEW = 'whsec-new-9876543210'

/**
 * Rotating a webhook's secret without losing a delivery: receivers accept the old and the new secret for a while
 * (`verifySignature` takes both), the gateway switches to the new one, then the old is dropped. And a receiver
 * that follows the README by hand (HMAC-SHA256 of "<timestamp>.<body>", compared with the header) verifies a real
 * delivery, and refuses one whose timestamp is older than the tolerance (a replay).
 */
describe('webhook signatures: the README recipe, replay and secret rotation', () => {
  test('a real delivery signed with the new secret verifies against [old, new]; one signed with neither does not', async () => {
    const { store, drop } = await createTestStore('sqlite')
    const receiver = await startReceiver(() => 204)
    try {
      const notifier = createNotifier({
        config: { webhooks: [{ name: 'reviewers', url: `${receiver.url}/hook`, secret: { env: 'HOOK_SECRET' }, format: 'json' }], retry: { max_attempts: 1, initial_backoff_ms: 10, max_backoff_ms: 10 }, timeout_ms: 30_000 },
        store,
        log: { warn: () => undefined, error: () => undefined },
        baseUrl: 'https://warrant.example',
        env: { HOOK_SECRET: NEW },
      })
      notifier.emit({ kind: 'plan.awaiting_review', plan: { plan_id: 'plan_rot', resource: 'subscriptions', environment: 'prod', action: 'pause_collection', target_count: 2 }, reviewers_needed: 1, proposed_by: 'ci-agent', expires_at: null })
      await notifier.flush()
      await notifier.close()
      const [hook] = receiver.received
      const timestamp = String(hook!.headers['x-warrant-timestamp'])
      const signature = String(hook!.headers['x-warrant-signature'])

      // the README, by hand
      assert.equal(signature, `sha256=${createHmac('sha256', NEW).update(`${timestamp}.${hook!.body}`).digest('hex')}`)
      assert.ok(Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300, 'a timestamp a receiver can bound')

      assert.equal(verifySignature({ secret: [OLD, NEW], body: hook!.body, timestamp, signature }), true, 'during a rotation')
      assert.equal(verifySignature({ secret: [NEW], body: hook!.body, timestamp, signature }), true)
      assert.equal(verifySignature({ secret: [OLD], body: hook!.body, timestamp, signature }), false)
      assert.equal(verifySignature({ secret: [], body: hook!.body, timestamp, signature }), false, 'no secret verifies nothing')
      assert.equal(verifySignature({ secret: '', body: hook!.body, timestamp, signature: `sha256=${createHmac('sha256', '').update(`${timestamp}.${hook!.body}`).digest('hex')}` }), false, 'an empty secret verifies nothing')
      assert.equal(verifySignature({ secret: [OLD, NEW], body: hook!.body, timestamp, signature, now: new Date((Number(timestamp) + 301) * 1000) }), false, 'a replay past the tolerance')
    } finally {
      await receiver.close()
      await drop()
    }
  })
})
