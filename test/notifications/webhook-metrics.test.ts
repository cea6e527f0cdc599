import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { createSelection, proposePlan, startReceiver } from '../ui/support.js'

/**
 * A reviewer who was never told (every attempt refused) is found by the platform engineer without reading the
 * audit log: `/metrics` carries `warrant_webhook_deliveries{webhook,state}`, read from the store at each scrape, so
 * every instance sharing the store says the same. Was: nothing on /metrics said a delivery had failed.
 */
for (const kind of STORE_KINDS) {
  describe(`webhook deliveries on /metrics (${kind} store)`, () => {
    let fx: GatewayFixture
    let down: Awaited<ReturnType<typeof startReceiver>>
    let up: Awaited<ReturnType<typeof startReceiver>>
    before(async () => {
      down = await startReceiver(() => 500)
      up = await startReceiver(() => 204)
      fx = await startDemoGateway({
        store: kind,
        count: 200,
        edit: (raw) => {
          raw.notifications = {
            webhooks: [
              { name: 'on-call', url: `${down.url}/hook`, format: 'slack', events: ['plan.awaiting_review'] },
              { name: 'reviewers', url: `${up.url}/hook`, format: 'slack', events: ['plan.awaiting_review'] },
            ],
            retry: { max_attempts: 2, initial_backoff_ms: 10, max_backoff_ms: 20 },
            timeout_ms: 30_000,
          }
        },
      })
    })
    after(async () => {
      await fx?.close()
      await down?.close()
      await up?.close()
    })

    test('a delivery out of attempts counts as failed for its webhook; the one delivered as delivered', async () => {
      const selection = await createSelection(fx, { filter: { status: 'past_due' } })
      await proposePlan(fx, selection.selection_id)
      await fx.gateway.notifications.flush()
      assert.equal(down.received.length, 2, 'both attempts reached the receiver that refuses')
      const res = await fetch(`${fx.base}/metrics`, { headers: { authorization: `Bearer ${fx.tokens.admin}` } })
      assert.equal(res.status, 200)
      const lines = (await res.text()).split('\n').filter((l) => l.startsWith('warrant_webhook_deliveries{'))
      assert.deepEqual(lines.sort(), ['warrant_webhook_deliveries{webhook="on-call",state="failed"} 1', 'warrant_webhook_deliveries{webhook="reviewers",state="delivered"} 1'])
    })
  })
}
