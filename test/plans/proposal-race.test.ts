import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

for (const kind of STORE_KINDS) {
  describe(`the same proposal names the same plan under concurrency (${kind})`, () => {
    let fx: GatewayFixture
    let second: Gateway
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 60, serve: false })
      // PostgreSQL: a second gateway instance on the same store, as a second process behind a load balancer.
      // SQLite: one instance (better-sqlite3 is synchronous: two connections in one process cannot wait on
      // each other's lock; separate processes can, and take the same BEGIN IMMEDIATE path).
      second = kind === 'postgres' ? await openGateway({ config: fx.config, executors: false, log: createLogger({ level: 'silent' }) }) : fx.gateway
    })
    after(async () => {
      if (second !== fx?.gateway) await second?.close()
      await fx?.close()
    })

    test('30 rounds: the same proposal sent at once through two gateways yields one plan each round', { timeout: 240_000 }, async () => {
      const actor = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
      for (let round = 0; round < 30; round++) {
        const selection = await fx.gateway.selections.create(actor, 'subscriptions', { filter: { status: 'past_due' } })
        const request = { action: { type: 'pause_collection', params: { reason: `race ${round}` } } }
        const answers = await Promise.all(
          Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? fx.gateway : second).plans.propose(actor, selection.selection_id, request)),
        )
        const ids = new Set(answers.map((a) => a.plan_id))
        assert.equal(ids.size, 1, `round ${round}: ${[...ids].join(', ')}`)
        assert.equal(answers.filter((a) => a.created).length, 1, `round ${round}: exactly one answer created it`)
        const stored = await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selection.selection_id).execute()
        assert.equal(stored.length, 1, `round ${round}: one plan stored`)
      }
    })
  })
}
