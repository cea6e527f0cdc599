import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { startThingsToMove } from '../plans/support/odd-upstream.js'

/**
 * A selection's members were read from where the resource's connector pointed when it was frozen. The plans change
 * kept that place on the plan, taken at proposal: a connector pointed elsewhere between the freeze and the proposal
 * (staging's base_url changed to production's, the environment label left as it was) went unnoticed, and the plan was
 * proposed, its digest taken, on members read from an upstream the new one is not. Now the selection keeps where it
 * was read, and whatever acts on its members after a move is 409 naming the resource and `upstream_moved`; paging them
 * stays possible, and the selection's view says it moved.
 */
const movedRefusal = (e: any) => {
  assert.equal(e.code, 'conflict')
  assert.equal(e.status, 409)
  assert.equal(e.details?.reason, 'upstream_moved')
  assert.equal(e.details?.resource, 'things')
  assert.match(e.message, /"things"/)
  assert.match(e.message, /points elsewhere/)
  return true
}

for (const kind of STORE_KINDS) {
  describe(`a selection whose resource's connector was pointed elsewhere since it was frozen (${kind} store)`, () => {
    test('is refused for proposals and recovery, its view says so, its pages still read; one frozen before the digest was kept is judged by its label', async () => {
      const things = await startThingsToMove(kind)
      const { fx, agent, staging, production } = things
      try {
        const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
        const older = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' }, fields: ['id', 'status'] })
        assert.equal(selection.count, 7)
        assert.equal(selection.upstream_moved, null, 'read where the connector points')
        // a selection frozen before selections kept where they were read: no digest, as on a store migrated from then
        await fx.gateway.store.db.updateTable('selections').set({ upstream_digest: null }).where('id', '=', older.selection_id).execute()

        const moved = await things.move()
        assert.equal(moved.catalogue.get('things').environment, fx.gateway.catalogue.get('things').environment, 'the label reads the same')

        await assert.rejects(moved.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } }), movedRefusal)
        await assert.rejects(moved.selections.recover(agent, selection.selection_id), movedRefusal)
        const view = await moved.selections.view(agent, selection.selection_id)
        assert.match(view.upstream_moved ?? '', /points elsewhere/)
        assert.equal(view.committable, false)
        const page = await moved.selections.page(agent, selection.selection_id, {})
        assert.equal(page.records.length, 7, 'the frozen members still page')
        const none = await moved.store.db.selectFrom('plans').select('id').where('selection_id', '=', selection.selection_id).execute()
        assert.equal(none.length, 0, 'no plan was proposed')

        // judged by the environment label alone, as plans proposed before their digest was kept
        const legacy = await moved.plans.propose(agent, older.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
        assert.equal(legacy.created, true)
        assert.equal((await moved.selections.view(agent, older.selection_id)).upstream_moved, null)

        // where the connector still points, the same selection is proposed on
        await things.handBack()
        const proposed = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
        assert.equal(proposed.created, true)
        assert.equal(production.writes.size + staging.writes.size, 0)
      } finally {
        await things.close()
      }
    })
  })
}
