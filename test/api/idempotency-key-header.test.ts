import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

/** A POST with the Idempotency-Key header line sent once per key given (node joins nothing on the wire). */
function postWithKeys(fx: GatewayFixture, path: string, body: unknown, keys: readonly string[]): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${fx.base}${path}`,
      { method: 'POST', headers: { authorization: `Bearer ${fx.tokens.agent}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'idempotency-key': [...keys] } },
      (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => (text += chunk.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

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
