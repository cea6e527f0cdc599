import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { createSelection, proposePlan, startReceiver } from '../ui/support.js'

/**
 * Whether a reviewer was told is part of the record: each attempt to deliver a webhook is a run-level row in the
 * audit chain (with the plan and operation ids, so `warrant audit query --plan` finds it), with its outcome, the
 * receiver's status and the delivery id; never the body, and never the URL (a Slack URL is a secret).
 */
for (const kind of STORE_KINDS) {
  describe(`each webhook delivery attempt is in the audit log (${kind} store)`, () => {
    let fx: GatewayFixture
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    before(async () => {
      receiver = await startReceiver((_path, n) => (n === 0 ? 503 : 204))
      fx = await startDemoGateway({
        store: kind,
        count: 200,
        edit: (raw) => {
          raw.notifications = {
            webhooks: [{ name: 'reviewers', url: `${receiver.url}/hook/T0/B0/xoxb-secret-path`, format: 'slack', events: ['plan.awaiting_review'] }],
            retry: { max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 20 },
            timeout_ms: 30_000,
          }
        },
      })
    })
    after(async () => {
      await fx?.close()
      await receiver?.close()
    })

    test('a failed attempt and the retry that delivered: two rows, in order, on the plan; the chain verifies', async () => {
      const selection = await createSelection(fx, { filter: { status: 'past_due' } })
      const plan = await proposePlan(fx, selection.selection_id)
      await fx.gateway.notifications.flush()
      assert.equal(receiver.received.length, 2)
      const [delivery] = await fx.gateway.notifications.deliveries({ plan_id: plan.plan_id })
      const rows = (await fx.gateway.audit.query({ plan_id: plan.plan_id })).events.filter((e) => e.action === 'webhook.delivery')
      assert.deepEqual(
        rows.map((r) => ({ surface: r.surface, principal: r.principal, summary: r.summary })),
        [
          { surface: 'system', principal: null, summary: { delivery_id: delivery!.delivery_id, webhook: 'reviewers', event: 'plan.awaiting_review', attempt: 1, outcome: 'retrying', status: 503, error: 'the receiver answered HTTP 503' } },
          { surface: 'system', principal: null, summary: { delivery_id: delivery!.delivery_id, webhook: 'reviewers', event: 'plan.awaiting_review', attempt: 2, outcome: 'delivered', status: 204, error: null } },
        ],
      )
      const all = JSON.stringify((await fx.gateway.audit.query({ limit: 1000 })).events)
      assert.ok(!all.includes('xoxb-secret-path'), "the receiver's URL stays out of the log")
      assert.equal((await fx.gateway.audit.verify()).ok, true)
    })
  })
}
