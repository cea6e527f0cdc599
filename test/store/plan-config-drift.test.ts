import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { migrateToLatest, storeMigrations } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'
import { planRow, selectionRow } from '../support/stored-rows.js'

/** The store as it was before a plan kept the drift seen under it. */
const BEFORE = Object.fromEntries(Object.entries(storeMigrations).filter(([name]) => name < '0018'))

for (const kind of STORE_KINDS) {
  describe(`migration 0018: the config drift seen under a plan (${kind} store)`, () => {
    test('plans that exist as it runs have no drift seen (none was recorded): null, judged as before', async () => {
      const { store, drop } = await createTestStore(kind, { migrate: false })
      try {
        assert.equal((await migrateToLatest({ db: store.db, migrations: BEFORE })).error, undefined)
        await store.db.insertInto('selections').values(selectionRow('sel_old')).execute()
        await store.db.insertInto('plans').values(planRow('pln_old', 'sel_old')).execute()
        const outcome = await store.migrate()
        assert.equal(outcome.error, undefined, outcome.error?.message)
        assert.ok(outcome.applied.includes('0018_plan_config_drift'), JSON.stringify(outcome.applied))
        const rows = await store.db.selectFrom('plans').select(['id', 'state', 'config_drifted_at', 'config_drift']).execute()
        assert.deepEqual(rows, [{ id: 'pln_old', state: 'approved', config_drifted_at: null, config_drift: null }])
      } finally {
        await drop()
      }
    })
  })
}
