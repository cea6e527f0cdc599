import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS, createTempDir, type TempDir } from '../support/stores.js'
import { startReceiver } from '../ui/support.js'

for (const kind of STORE_KINDS) {
  describe(`plan.decided is sent once per reviewer: a repeated approval by the same principal is not news (${kind} store)`, () => {
    let fx: GatewayFixture
    let dir: TempDir
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    before(async () => {
      receiver = await startReceiver(() => 204)
      dir = await createTempDir('warrant-repeat-')
      const secret = join(dir.path, 'webhook-secret')
      await writeFile(secret, 'whsec-repeat-0123456789\n')
      fx = await startDemoGateway({
        store: kind,
        count: 500,
        edit: (raw) => {
          raw.notifications = { webhooks: [{ name: 'reviewers', url: `${receiver.url}/hook`, secret: { file: secret }, events: ['plan.decided'] }], timeout_ms: 30_000 }
        },
      })
    })
    after(async () => {
      await fx?.close()
      await receiver?.close()
      await dir?.drop()
    })

    test('alice approves, then again with the same token and with her second one: one plan.decided webhook', async () => {
      const phone = (await fx.gateway.principals.addToken({ principal: 'alice' })).token
      const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'us' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const plan = (await fx.as('agent')('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'once' } } })).body
      assert.equal(plan.approval.reviewers_needed, 1, JSON.stringify(plan.approval))
      const approve = (token: string) =>
        fetch(`${fx.base}/v1/plans/${plan.plan_id}/approvals`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'approve', expected_plan_digest: plan.plan_digest }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { counted: boolean; plan_state: string } }))

      const decisions = [await approve(fx.tokens.reviewer), await approve(fx.tokens.reviewer), await approve(phone)]
      assert.deepEqual(
        decisions.map((d) => [d.status, d.body.counted, d.body.plan_state]),
        [
          [201, true, 'approved'],
          [200, false, 'approved'],
          [200, false, 'approved'],
        ],
      )
      await fx.gateway.notifications.flush()
      const decided = receiver.received.filter((r) => r.headers['x-warrant-event'] === 'plan.decided').map((r) => JSON.parse(r.body))
      assert.equal(decided.length, 1, JSON.stringify(decided))
      assert.equal(decided[0].plan_id, plan.plan_id)
      assert.equal(decided[0].outcome.decided_by, 'alice')
      assert.equal(decided[0].outcome.plan_state, 'approved')
      assert.equal((await fx.gateway.notifications.deliveries({ plan_id: plan.plan_id })).length, 1, 'nothing else queued either')
    })
  })
}
