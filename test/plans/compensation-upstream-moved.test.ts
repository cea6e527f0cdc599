import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { closedByOperation, startThingsToMove } from './support/odd-upstream.js'

/**
 * A compensation writes an operation's before-values back. It checked only the environment label: after the
 * resource's connector was pointed from staging to a production copy (the label left as it was), proposing the undo
 * of a staging operation froze a selection on production, read production's records and took a plan whose
 * upstream digest was production's, so every later check passed and the approved "undo" would write staging's old
 * values into production. It is now refused at proposal as plan approval refuses a moved plan: 409 `conflict`,
 * `reason: upstream_moved`, naming the resource; nothing is frozen, nothing is written, and nothing is read: the
 * refusal comes before the current values are read for the preview (it read every target from production first).
 */
for (const kind of STORE_KINDS) {
  describe(`a compensation proposed after the connector was pointed elsewhere (${kind} store)`, () => {
    test('where the operation wrote, it is proposed; once the connector moved, 409 conflict upstream_moved naming the resource', async () => {
      const things = await startThingsToMove(kind)
      const { fx, agent, staging, production } = things
      try {
        const { receipt } = await closedByOperation(fx, agent, staging)
        // production is a copy of staging as the operation left it: the same ids, values and ETags
        for (const [id, thing] of staging.things) production.things.set(id, { ...thing })
        // on the connector the operation wrote through, the undo is proposed (before the move: two gateways on one
        // SQLite file in one process must not write at once)
        const compensation = (await fx.gateway.operations.proposeCompensation(agent, receipt.operation_id)) as { target_count: number }
        assert.equal(compensation.target_count, staging.things.size)
        const selectionsBefore = await fx.gateway.store.db.selectFrom('selections').select('id').execute()

        // the upstream calls' audit rows are appended in batches: written before a second gateway opens the file
        await fx.gateway.audit.flush()
        const moved = await things.move()
        assert.equal(moved.catalogue.get('things').environment, fx.gateway.catalogue.get('things').environment, 'the label reads the same')
        await assert.rejects(moved.operations.proposeCompensation(agent, receipt.operation_id), (e: any) => {
          assert.equal(e.code, 'conflict', e.message)
          assert.equal(e.details?.reason, 'upstream_moved', JSON.stringify(e.details))
          assert.equal(e.details?.resource, 'things')
          assert.match(e.message, /resource "things" points elsewhere than where operation \S+ wrote/)
          return true
        })
        assert.equal((await fx.gateway.store.db.selectFrom('selections').select('id').execute()).length, selectionsBefore.length, 'no selection was frozen')
        assert.equal(production.writes.size, 0, 'nothing was written to the upstream the operation never wrote')
        // refused before any upstream read, as propose, approve and commit refuse: not one request reached production
        assert.deepEqual(production.seen.map((r) => `${r.method} ${r.rawUrl}`), [], 'the moved-to upstream was never read')
        // (the open compensation proposed above is not answered either: it restores values where the connector no longer points)
      } finally {
        await things.close()
      }
    })
  })
}
