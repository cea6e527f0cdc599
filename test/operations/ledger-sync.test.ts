import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { markInFlight, recordOutcome } from '../../src/operations/ledger.js'
import { joinCommits } from '../../src/store/index.js'
import { createHarness } from './support/harness.js'
import { NOW, OWNER, seedOperation } from './support/seed-operation.js'

/**
 * On a SQLite store the ledger's in-flight marks are synced commits (the mark is on disk before the upstream
 * call it announces) and a group of outcomes alone is not (the next mark's sync covers it). Observed from inside
 * each ledger transaction: a joiner offered every commit reads the connection's `synchronous` setting there.
 */
describe('ledger commits and their syncs (sqlite store)', () => {
  test('a mark commits at FULL, outcomes alone at NORMAL, a group holding both at FULL; FULL again after', async () => {
    const h = await createHarness('sqlite', { count: 1 })
    try {
      await seedOperation(h, 'op_sync', 4)
      const seen: number[] = []
      const withdraw = joinCommits(h.store.db, {
        join: async (trx) => {
          seen.push(Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(trx)).rows[0]!.synchronous))
          return null
        },
      })
      try {
        const outcome = { state: 'succeeded', reason: null, after: { kept: true }, after_version: '2' } as const
        assert.equal(await markInFlight(h.store.db, 'op_sync', 1, OWNER, NOW), true)
        assert.equal(await recordOutcome(h.store.db, 'op_sync', 1, outcome, NOW), true)
        // asked for in the same turn: one group, which holds a mark
        const [marked, recorded] = await Promise.all([markInFlight(h.store.db, 'op_sync', 2, OWNER, NOW), markInFlight(h.store.db, 'op_sync', 3, OWNER, NOW)])
        assert.deepEqual([marked, recorded], [true, true])
        const both = await Promise.all([recordOutcome(h.store.db, 'op_sync', 2, outcome, NOW), markInFlight(h.store.db, 'op_sync', 4, OWNER, NOW)])
        assert.deepEqual(both, [true, true])
        assert.deepEqual(seen, [2, 1, 2, 2], 'mark, outcome alone, two marks, outcome with a mark')
      } finally {
        withdraw()
      }
      assert.equal(Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(h.store.db)).rows[0]!.synchronous), 2)
      const states = await h.store.db.selectFrom('operation_targets').select(['ord', 'state']).where('operation_id', '=', 'op_sync').orderBy('ord').execute()
      assert.deepEqual(states.map((r) => `${r.ord}:${r.state}`), ['1:succeeded', '2:succeeded', '3:in_flight', '4:in_flight'])
    } finally {
      await h.close()
    }
  })
})
