import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

const CONCURRENT = 20

/**
 * `POST /v1/selections/{id}/recover` is one object per incomplete selection and principal: asked twice it is the
 * same recovery (201 created, then 200 with created false); asked 20 times at once (each request walks before any is frozen) it is still one frozen
 * selection, and the walks that lost leave nothing behind. Without the lock around "is there a frozen recovery,
 * else freeze this one", every concurrent request freezes its own.
 */
for (const kind of STORE_KINDS) {
  describe(`a recovery is created once (${kind} store)`, () => {
    let fx: GatewayFixture
    const incomplete = async (region: string): Promise<string> => {
      const partial = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region }, page_size: 20, budget: { max_pages: 1 } })
      assert.equal(partial.status, 201, JSON.stringify(partial.body))
      assert.equal(partial.body.complete, false)
      return partial.body.selection_id
    }
    const recoveries = async (of: string) =>
      (await fx.gateway.store.db.selectFrom('selections').select(['id', 'state']).where('origin', '=', JSON.stringify({ kind: 'recovery', selection_id: of })).execute())
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 600 })
    })
    after(async () => {
      await fx?.close()
    })

    test('asked twice: the same recovery', async () => {
      const of = await incomplete('us')
      const first = await fx.as('agent')('POST', `/v1/selections/${of}/recover`)
      assert.equal(first.status, 201, JSON.stringify(first.body))
      assert.equal(first.body.recovery_of, of)
      assert.equal(first.body.complete, true)
      assert.equal(first.body.created, true)
      const again = await fx.as('agent')('POST', `/v1/selections/${of}/recover`)
      assert.equal(again.status, 200, JSON.stringify(again.body))
      assert.equal(again.body.created, false)
      assert.equal(again.body.selection_id, first.body.selection_id)
      assert.deepEqual(await recoveries(of), [{ id: first.body.selection_id, state: 'frozen' }])
    })

    test(`asked ${CONCURRENT} times at once: one frozen recovery, nothing else left`, async () => {
      const of = await incomplete('eu')
      const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => fx.as('agent')('POST', `/v1/selections/${of}/recover`)))
      for (const a of answers) assert.ok(a.status === 201 || a.status === 200, JSON.stringify(a.body))
      const ids = new Set(answers.map((a) => a.body.selection_id))
      assert.equal(ids.size, 1, `${ids.size} recoveries: ${[...ids].join(', ')}`)
      assert.deepEqual(answers.map((a) => [a.status, a.body.created]).filter(([status]) => status === 201), [[201, true]], 'one request created it')
      assert.deepEqual(await recoveries(of), [{ id: [...ids][0], state: 'frozen' }])
      const members = await fx.gateway.store.db.selectFrom('selection_members').select('selection_id').distinct().execute()
      const live = new Set((await fx.gateway.store.db.selectFrom('selections').select('id').execute()).map((s) => s.id))
      assert.ok(members.every((m) => live.has(m.selection_id)), 'no members of a discarded walk remain')
    })
  })
}
