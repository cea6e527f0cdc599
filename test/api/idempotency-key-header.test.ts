import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { postWithKeys } from '../support/post-with-keys.js'

// Sent twice, the header reached the service as "k1, k2": a third key, naming an operation neither sender meant.
// The routes read no store but their own, so one store kind is enough.
describe('an Idempotency-Key header given twice is refused, naming it; nothing is committed', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 200 })
  })
  after(() => fx?.close())

  test('on the plan commit and on bulk-actions; one key then commits', async () => {
    const action = { type: 'pause_collection', params: { reason: 'twice' } }
    const selection = (await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', collection: 'active' } })).body
    const plan = (await fx.as('agent')('POST', `/v1/selections/${selection.selection_id}/plans`, { action })).body
    assert.equal((await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })).status, 201)
    const operations = async () => Number((await fx.gateway.store.db.selectFrom('operations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

    for (const [path, body] of [
      [`/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }],
      ['/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }],
    ] as const) {
      const refused = await postWithKeys(fx, path, body, ['k1', 'k2'])
      assert.equal(refused.status, 400, JSON.stringify(refused.body))
      assert.equal(refused.body.error.code, 'invalid_request')
      assert.match(refused.body.error.message, /Idempotency-Key header is given 2 times/)
      assert.equal(await operations(), 0, `${path}: nothing committed`)
    }
    const committed = await postWithKeys(fx, `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, ['k1'])
    assert.equal(committed.status, 202, JSON.stringify(committed.body))
    assert.equal(await operations(), 1)
  })
})
