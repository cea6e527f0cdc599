import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { markInFlight, recordOutcome, returnToPending, type TargetOutcome } from '../../src/operations/ledger.js'
import { STORE_KINDS } from '../support/stores.js'
import { createHarness } from './support/harness.js'
import { OWNER, NOW, seedOperation } from './support/seed-operation.js'

/**
 * The ledger commits the transitions asked for together in one transaction, and the outcomes of one
 * operation that set the same columns as one statement. What each target ends with must be exactly what it
 * would have been alone: every value as given (quotes, NUL-free unicode, nulls, a `before` left alone when the
 * outcome has none), a target no longer in flight untouched, and a target answered twice in one group changed
 * only by the first answer.
 */
describe('ledger group commit (postgres store): in-flight marks do not wait behind outcomes', () => {
  test('a window is claimed while the outcomes before it still wait for their commit', async () => {
    const h = await createHarness('postgres', { count: 1 })
    try {
      const db = h.store.db
      await seedOperation(h, 'op_ledger_lanes', 4)
      assert.equal(await markInFlight(db, 'op_ledger_lanes', 1, OWNER, NOW), true)
      let release!: () => void
      const released = new Promise<void>((r) => (release = r))
      let locked!: () => void
      const isLocked = new Promise<void>((r) => (locked = r))
      // another connection holds target 1's row: its outcome's group cannot commit until this ends
      const holder = db.transaction().execute(async (trx) => {
        await trx.selectFrom('operation_targets').select('ord').where('operation_id', '=', 'op_ledger_lanes').where('ord', '=', 1).forUpdate().execute()
        locked()
        await released
      })
      await isLocked
      let outcomeDone = false
      const outcome = returnToPending(db, 'op_ledger_lanes', 1, 'slow down', NOW).then((changed) => ((outcomeDone = true), changed))
      let claimed: boolean[] | 'waited'
      let marks: Promise<boolean[]>
      try {
        await new Promise((r) => setTimeout(r, 50))
        marks = Promise.all([markInFlight(db, 'op_ledger_lanes', 2, OWNER, NOW), markInFlight(db, 'op_ledger_lanes', 3, OWNER, NOW)])
        claimed = await Promise.race([marks, new Promise<'waited'>((r) => setTimeout(() => r('waited'), 5_000))])
      } finally {
        // whatever happened, the row is let go, so nothing is left waiting when the store closes
        release()
        await holder
      }
      assert.deepEqual(claimed, [true, true], 'the marks committed while the outcome group was held')
      assert.equal(outcomeDone, false, 'the outcome was still waiting for the row when the marks had committed')
      await marks
      assert.equal(await outcome, true)
      const states = await db.selectFrom('operation_targets').select(['ord', 'state']).where('operation_id', '=', 'op_ledger_lanes').orderBy('ord').execute()
      assert.deepEqual(states.map((r) => [Number(r.ord), r.state]), [[1, 'pending'], [2, 'in_flight'], [3, 'in_flight'], [4, 'pending']])
    } finally {
      await h.close()
    }
  })
})

for (const kind of STORE_KINDS) {
  describe(`ledger group commit (${kind} store)`, () => {
    test('a group of outcomes lands value for value; one not in flight and one answered twice are refused', async () => {
      const h = await createHarness(kind, { count: 1 })
      try {
        const db = h.store.db
        const operationId = 'op_ledger_batch'
        await seedOperation(h, operationId, 40)
        // 1..30 in flight, in one group
        assert.deepEqual(await Promise.all(Array.from({ length: 30 }, (_, i) => markInFlight(db, operationId, i + 1, OWNER, NOW))), Array(30).fill(true))

        const tricky = `O'Brien "quoted" \\ é 𝄞 ; drop table x; --`
        const outcomeOf = (ord: number): TargetOutcome => {
          if (ord % 5 === 0) return { state: 'failed', reason: 'rejected', message: `${tricky} #${ord}`, upstream_status: 422, before: { plan: tricky } }
          if (ord % 5 === 1) return { state: 'skipped', reason: 'version_changed', message: 'moved on' }
          if (ord % 5 === 2) return { state: 'unknown', reason: 'upstream_unknown', message: 'no answer', before: null }
          return { state: 'succeeded', reason: null, upstream_status: 200, before: { plan: 'basic', n: ord }, after: { plan: 'pro', n: ord }, after_version: String(ord + 1) }
        }
        const asked = [
          ...Array.from({ length: 20 }, (_, i) => recordOutcome(db, operationId, i + 1, outcomeOf(i + 1), NOW)),
          returnToPending(db, operationId, 21, 'slow down', NOW),
          returnToPending(db, operationId, 22, 'slow down', NOW),
          // 35 was never put in flight
          recordOutcome(db, operationId, 35, outcomeOf(35), NOW),
        ]
        assert.deepEqual(await Promise.all(asked), [...Array(22).fill(true), false])
        // 23 answered twice in one group (that group goes statement by statement): the first answer stands
        const twice = [
          recordOutcome(db, operationId, 23, { state: 'succeeded', reason: null, upstream_status: 200 }, NOW),
          recordOutcome(db, operationId, 23, { state: 'failed', reason: 'rejected', upstream_status: 400 }, NOW),
          recordOutcome(db, operationId, 24, { state: 'succeeded', reason: null, upstream_status: 201 }, NOW),
        ]
        assert.deepEqual(await Promise.all(twice), [true, false, true])

        const rows = await db.selectFrom('operation_targets').selectAll().where('operation_id', '=', operationId).orderBy('ord').execute()
        const at = (ord: number) => rows.find((r) => Number(r.ord) === ord)!
        for (let ord = 1; ord <= 20; ord++) {
          const o = outcomeOf(ord)
          const row = at(ord)
          assert.deepEqual(
            {
              state: row.state,
              reason: row.reason,
              error: row.error,
              upstream_status: row.upstream_status === null ? null : Number(row.upstream_status),
              before: row.before,
              after: row.after,
              after_version: row.after_version,
              unknown_since: row.unknown_since,
              updated_at: row.updated_at,
              attempts: Number(row.attempts),
            },
            {
              state: o.state,
              reason: o.reason,
              error: o.message ? JSON.stringify({ message: o.message }) : null,
              upstream_status: o.upstream_status ?? null,
              before: o.before === undefined ? '{"kept":true}' : o.before === null ? null : JSON.stringify(o.before),
              after: o.after ? JSON.stringify(o.after) : null,
              after_version: o.after_version ?? null,
              unknown_since: o.state === 'unknown' ? NOW : null,
              updated_at: NOW,
              attempts: 1,
            },
            `target ${ord}`,
          )
        }
        for (const ord of [21, 22]) assert.deepEqual([at(ord).state, at(ord).reason, Number(at(ord).upstream_status)], ['pending', 'rate_limited', 429])
        assert.deepEqual([at(23).state, Number(at(23).upstream_status)], ['succeeded', 200], 'the first answer stands')
        assert.deepEqual([at(35).state, at(35).reason], ['pending', null], 'never in flight: untouched')
        assert.deepEqual([at(24).state, Number(at(24).upstream_status)], ['succeeded', 201])
        for (let ord = 25; ord <= 30; ord++) assert.equal(at(ord).state, 'in_flight')
      } finally {
        await h.close()
      }
    })
  })
}
