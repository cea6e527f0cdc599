import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CompiledQuery, sql } from 'kysely'
import { followingPlans, remainderOrigin } from '../../src/plans/follow-ups.js'
import type { Store } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { planRow, selectionRow } from '../support/stored-rows.js'

// Every view of a finished operation with pending targets (the API, MCP, the page's 2-second poll) and every proposal
// of its rest look for the remainder plans on a selection of origin `remainder` naming it. Selections are never
// deleted (expiry is read, not swept), so the store grows by one for every search-to-select, and without an index on
// `origin` each such view walked them all. Migration 0020's partial index holds only the selections with an origin.
const SELECTIONS = 5_000
const BATCH = 500

for (const kind of STORE_KINDS) {
  describe(`the remainder of an operation is found by the selection's origin, not a walk of every selection (${kind} store)`, () => {
    test('the statement followingPlans runs is answered from the origin index on a store of many selections', { timeout: 60_000 }, async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        await seed(store)
        await sql`analyze`.execute(store.db)

        const query = followingPlans(store.db, remainderOrigin('op_42', 'pln_42'))
        assert.deepEqual((await query.execute()).map((p) => p.id), ['pln_of_sel_4200'], 'the remainder plan is found')

        const compiled = query.compile()
        const explain = kind === 'sqlite' ? 'explain query plan ' : 'explain '
        const plan = await store.db.executeQuery<Record<string, string>>(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]))
        const text = plan.rows.map((row) => row.detail ?? row['QUERY PLAN']).join(' | ')
        assert.match(text, /selections_origin_idx/, text)
        assert.doesNotMatch(text, /SCAN selections\b|Seq Scan on selections\b/, text)
      } finally {
        await drop()
      }
    })
  })
}

/** Many plain selections (no origin), a recovery per 10, a remainder per 100; a pending plan on one in 5: inserted directly. */
async function seed(store: Store): Promise<void> {
  const origin = (i: number) =>
    i % 100 === 0 ? JSON.stringify(remainderOrigin(`op_${i / 100}`, `pln_${i / 100}`)) : i % 10 === 0 ? JSON.stringify({ kind: 'recovery', selection_id: `sel_${i - 1}` }) : null
  const ids = Array.from({ length: SELECTIONS }, (_, i) => i)
  const selections = ids.map((i) => selectionRow(`sel_${i}`, { created_by: 'prn_a', origin: origin(i) }))
  const plans = ids.filter((i) => i % 5 === 0).map((i) => planRow(`pln_of_sel_${i}`, `sel_${i}`, { state: 'pending' }))
  for (let i = 0; i < selections.length; i += BATCH) await store.db.insertInto('selections').values(selections.slice(i, i + BATCH)).execute()
  for (let i = 0; i < plans.length; i += BATCH) await store.db.insertInto('plans').values(plans.slice(i, i + BATCH)).execute()
}
