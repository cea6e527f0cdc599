import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { closedByOperation, startThingsToMove } from './support/odd-upstream.js'

/**
 * A compensation is synthesized from the action the operation wrote through: the fields it restores are that action's
 * `set`, its write that action's `write`. They were read from the config as it is when the compensation is proposed,
 * not as the operation ran. Redefined since (set_status no longer sets `note`), the "undo" of an operation that
 * closed every thing and wrote its `note` restored `status` alone and left each `note` as the operation wrote it, a
 * plan reviewed and committed as the operation's compensation. The operation keeps the definition it ran; a compensation proposed after the action
 * was redefined is 409 `conflict` (`reason: action_redefined`), nothing frozen, until the definition is put back.
 */
for (const kind of STORE_KINDS) {
  describe(`a compensation proposed after the action written through was redefined (${kind} store)`, () => {
    test('is refused, 409 conflict naming the action; nothing is frozen', async () => {
      const things = await startThingsToMove(kind, {
        edit: (t) => {
          t.actions.set_status.set = { status: '{{params.status}}', note: 'closed by warrant' }
          t.actions.set_status.write.body = { status: '{{set.status}}', note: '{{set.note}}' }
        },
        move: (t) => {
          t.actions.set_status.set = { status: '{{params.status}}' }
          t.actions.set_status.write.body = { status: '{{set.status}}' }
        },
      })
      const { fx, agent, staging } = things
      try {
        const { receipt } = await closedByOperation(fx, agent, staging)
        await fx.gateway.audit.flush()
        const moved = await things.move()
        const selectionsBefore = await moved.store.db.selectFrom('selections').select('id').execute()
        await assert.rejects(moved.operations.proposeCompensation(agent, receipt.operation_id), (e: any) => {
          assert.equal(e.code, 'conflict', e.message)
          assert.equal(e.details?.reason, 'action_redefined', JSON.stringify(e.details))
          assert.match(e.message, /set_status/)
          return true
        })
        assert.equal((await moved.store.db.selectFrom('selections').select('id').execute()).length, selectionsBefore.length, 'no selection was frozen')
        await things.handBack()
      } finally {
        await things.close()
      }
    })
  })
}
