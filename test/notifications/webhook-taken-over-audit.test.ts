import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createAuditLog } from '../../src/audit/index.js'
import { createNotifier, type NotificationEvent } from '../../src/notifications/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { until } from '../support/until.js'
import { startReceiver } from '../ui/support.js'

/**
 * Every request Warrant makes to a receiver is in the audit chain, including one whose answer came after this
 * gateway's lease on the delivery had lapsed and another gateway had taken the delivery over: the request was made
 * (the receiver may have acted on it), so the chain says so, with what came back and that it was not this gateway's
 * to record in the delivery any more.
 */
const EVENT: NotificationEvent = {
  kind: 'plan.awaiting_review',
  plan: { plan_id: 'plan_taken_over', resource: 'subscriptions', environment: 'billing-prod', action: 'pause_collection', target_count: 5 },
  reviewers_needed: 1,
  proposed_by: 'ci-agent',
  expires_at: null,
}
const silent = { warn: () => undefined, error: () => undefined }
const LONG_AGO = '2000-01-01T00:00:00.000Z'

for (const kind of STORE_KINDS) {
  describe(`a webhook attempt answered after another gateway took the delivery over (${kind} store)`, () => {
    test('is audited by the gateway that made it (outcome taken_over, the answer it got); the delivery stays the other one\'s', async () => {
      const { store, drop } = await createTestStore(kind)
      let answerFirst!: (status: number) => void
      const firstAnswer = new Promise<number>((resolve) => (answerFirst = resolve))
      const receiver = await startReceiver((_path, n) => (n === 0 ? firstAnswer : 204))
      const audit = createAuditLog({ store, log: silent })
      const config = { webhooks: [{ name: 'reviewers', url: `${receiver.url}/hook`, format: 'slack' as const }], retry: { max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 10 }, timeout_ms: 30_000 }
      const holder = createNotifier({ config, store, log: silent, baseUrl: 'https://warrant.example', audit, owner: 'gateway-a', closeGraceMs: 100 })
      const other = createNotifier({ config, store, log: silent, baseUrl: 'https://warrant.example', audit, owner: 'gateway-b', closeGraceMs: 100 })
      try {
        holder.emit(EVENT)
        await until(() => receiver.received.length === 1, 'the holder sending')
        // the holder stalls past its lease (a paused VM) while its request is out; the other gateway takes it over
        await store.db.updateTable('webhook_deliveries').set({ lease_until: LONG_AGO }).execute()
        await other.resume()
        await other.flush()
        assert.equal(receiver.received.length, 2, 'the other gateway delivered it')
        answerFirst(503)
        await holder.flush()
        const [delivery] = await holder.deliveries({ plan_id: 'plan_taken_over' })
        assert.deepEqual([delivery!.state, delivery!.attempts, delivery!.last_status], ['delivered', 1, 204], "the late answer did not overwrite the other gateway's record")
        const rows = (await audit.query({ plan_id: 'plan_taken_over' })).events.filter((e) => e.action === 'webhook.delivery')
        const summaries = rows.map((r) => r.summary as Record<string, unknown>)
        assert.deepEqual(
          summaries.map((s) => [s.attempt, s.outcome, s.status]).sort(),
          [
            [1, 'delivered', 204],
            [1, 'taken_over', 503],
          ],
          'both requests are in the chain',
        )
        const late = summaries.find((s) => s.outcome === 'taken_over')!
        assert.equal(late.delivery_id, delivery!.delivery_id)
        assert.equal(late.error, 'the receiver answered HTTP 503')
        assert.equal((await audit.verify()).ok, true)
      } finally {
        await holder.close()
        await other.close()
        await audit.flush()
        await receiver.close()
        await drop()
      }
    })
  })
}
