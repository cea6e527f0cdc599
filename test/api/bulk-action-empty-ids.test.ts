import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { isRefusedClaim } from '../../src/audit/entry.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

// The article's commit form took `selection_id: ""` and `expected_digest: ""` at its route (a plain z.string()): an
// empty id or digest is no id, and is refused as a 400 naming the field before anything is looked up or created.
for (const kind of STORE_KINDS) {
  describe(`POST /v1/resources/{resource}/bulk-actions refuses an empty id or digest (${kind})`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 50 })
    })
    after(() => fx?.close())

    const count = async (table: 'operations' | 'plans' | 'selections') =>
      Number((await fx.gateway.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

    test('an empty selection_id or expected_digest is 400 naming the field; nothing is created, no row claims success', async () => {
      const action = { type: 'pause_collection', params: { reason: 'probe' } }
      const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', collection: 'active' } })
      assert.equal(selection.status, 201)
      const before = { operations: await count('operations'), plans: await count('plans'), selections: await count('selections') }
      const cases = [
        { field: 'selection_id', body: { selection_id: '', expected_digest: selection.body.digest, action } },
        { field: 'expected_digest', body: { selection_id: selection.body.selection_id, expected_digest: '', action } },
      ]
      for (const [i, { field, body }] of cases.entries()) {
        const refused = await fx.as('agent')('POST', '/v1/resources/subscriptions/bulk-actions', body, { 'idempotency-key': `empty-${i}` })
        assert.equal(refused.status, 400, JSON.stringify(refused.body))
        assert.equal(refused.body.error.code, 'invalid_request')
        assert.match(refused.body.error.message, new RegExp(field), JSON.stringify(refused.body))
        // named as every route's own check names a field: a problem at its path, which a client can act on
        assert.deepEqual((refused.body.error.details?.problems ?? []).map((p: { path: string }) => p.path), [field], JSON.stringify(refused.body))
      }
      assert.deepEqual({ operations: await count('operations'), plans: await count('plans'), selections: await count('selections') }, before, 'nothing created')
      await fx.gateway.audit.flush()
      const rows = await fx.gateway.store.db.selectFrom('audit_events').select(['level', 'surface', 'summary', 'action']).where('action', 'like', '%bulk-actions%').execute()
      assert.equal(rows.length, 2, JSON.stringify(rows))
      for (const row of rows) assert.ok(isRefusedClaim({ ...row, summary: JSON.parse(row.summary) }), `recorded refused: ${row.summary}`)
    })

    test('the OpenAPI document says the id and digest are not empty', async () => {
      const doc = await fx.as('agent')('GET', '/openapi.json')
      const schema = doc.body.paths['/v1/resources/{resource}/bulk-actions'].post.requestBody.content['application/json'].schema
      const body = schema.$ref ? doc.body.components.schemas[schema.$ref.split('/').pop()] : schema
      assert.equal(body.properties.selection_id.minLength, 1, JSON.stringify(body))
      assert.equal(body.properties.expected_digest.minLength, 1, JSON.stringify(body))
    })
  })
}
