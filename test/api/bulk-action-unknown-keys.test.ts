import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

// The article's commit form must refuse a key it does not know, as the plan form and every other body do: the route's
// schema stripped it before the service's strict check saw the body, so `{"dry_run": true, ...}` ran the commit.
for (const kind of STORE_KINDS) {
  describe(`POST /v1/resources/{resource}/bulk-actions refuses unknown keys (${kind})`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 200 })
    })
    after(() => fx?.close())

    const paused = () => {
      const db = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length), { readonly: true })
      try {
        return (db.prepare(`select count(*) as n from subscriptions where collection = 'paused'`).get() as { n: number }).n
      } finally {
        db.close()
      }
    }
    const count = async (table: 'operations') =>
      Number((await fx.gateway.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

    test('an unknown top-level or action key is 400 naming it; nothing is committed or written', async () => {
      const action = { type: 'pause_collection', params: { reason: 'probe' } }
      const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', collection: 'active' } })
      assert.equal(selection.status, 201)
      const plan = await fx.as('agent')('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action })
      const approval = await fx.as('reviewer')('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })
      assert.equal(approval.status, 201)
      const pausedBefore = paused()
      const body = { selection_id: selection.body.selection_id, expected_digest: selection.body.digest, action }

      const refused = await fx.as('agent')('POST', '/v1/resources/subscriptions/bulk-actions', { ...body, dry_run: true }, { 'idempotency-key': 'dry-1' })
      assert.equal(refused.status, 400, JSON.stringify(refused.body))
      assert.equal(refused.body.error.code, 'invalid_request')
      assert.match(refused.body.error.message, /dry_run/)
      assert.equal(await count('operations'), 0, 'no operation')
      assert.equal(paused(), pausedBefore, 'no record written')

      // the same key with the body it should have had commits: the refusal did not claim the key
      const committed = await fx.as('agent')('POST', '/v1/resources/subscriptions/bulk-actions', body, { 'idempotency-key': 'dry-1' })
      assert.equal(committed.status, 202, JSON.stringify(committed.body))
    })
  })
}
