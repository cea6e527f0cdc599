import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { closedByOperation, startThingsToMove } from '../plans/support/odd-upstream.js'

/**
 * Reconciling an operation's unknown targets reads them through the resource's connector as configured now. After
 * the connector was pointed elsewhere (staging's base_url set to production's, the label left as it was), it read
 * the same ids on production and judged there whether staging's writes had landed: a record production already held
 * as approved read as `succeeded`, a write never checked where it went. Refused now, as a run and a compensation
 * are: 409 `upstream_moved`, nothing read, the targets left unknown.
 */
for (const kind of STORE_KINDS) {
  describe(`reconcile after the resource's connector was pointed elsewhere (${kind} store)`, () => {
    test('is refused 409 upstream_moved before any read; the unknown target stays unknown', async () => {
      const things = await startThingsToMove(kind)
      const { fx, agent, staging, production } = things
      try {
        const { receipt } = await closedByOperation(fx, agent, staging)
        const opId = receipt.operation_id
        // a write whose answer was lost: the target is unknown, as a timeout leaves it
        const lost = await fx.gateway.store.db.selectFrom('operation_targets').select(['ord', 'record_id']).where('operation_id', '=', opId).orderBy('ord').executeTakeFirstOrThrow()
        await fx.gateway.store.db
          .updateTable('operation_targets')
          .set({ state: 'unknown', reason: 'timeout', unknown_since: '2000-01-01T00:00:00.000Z' })
          .where('operation_id', '=', opId)
          .where('ord', '=', lost.ord)
          .execute()
        // production holds the same things, already closed by someone: a read there would "find" the approved effect
        for (const t of production.things.values()) t.status = 'closed'
        const readsBefore = production.seen.length

        const moved = await things.move()
        await assert.rejects(moved.operations.reconcile(agent, opId), (error: Error & { code?: string; details?: any }) => {
          assert.equal(error.code, 'conflict', error.message)
          assert.equal(error.details?.reason, 'upstream_moved', JSON.stringify(error.details))
          assert.match(error.message, /points elsewhere/)
          return true
        })
        assert.equal(production.seen.length, readsBefore, 'nothing was read where the operation never wrote')
        const row = await moved.store.db.selectFrom('operation_targets').select(['state']).where('operation_id', '=', opId).where('ord', '=', lost.ord).executeTakeFirstOrThrow()
        assert.equal(row.state, 'unknown')
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
