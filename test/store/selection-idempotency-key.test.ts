import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isUniqueViolation, migrateToLatest, storeMigrations } from '../../src/store/index.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

/** The store as it was before selections took an idempotency key. */
const BEFORE = Object.fromEntries(Object.entries(storeMigrations).filter(([name]) => name < '0009'))

for (const kind of STORE_KINDS) {
  describe(`migration 0009: a selection's idempotency key (${kind} store)`, () => {
    test('an older store migrates with its selections keyless; from then on one key holds one selection, and keyless rows repeat', async () => {
      const { store, drop } = await createTestStore(kind, { migrate: false })
      try {
        assert.equal((await migrateToLatest({ db: store.db, migrations: BEFORE })).error, undefined)
        await insertForeignBuildingSelection(store, 'sel_old', { createdBy: 'prn_a', origin: null })
        const outcome = await store.migrate()
        assert.equal(outcome.error, undefined, outcome.error?.message)
        assert.equal(outcome.applied[0], '0009_selection_idempotency_key', 'the migrations after 0008 run from 0009 on')
        assert.deepEqual(await store.db.selectFrom('selections').select(['id', 'idempotency_key', 'request_fingerprint']).execute(), [{ id: 'sel_old', idempotency_key: null, request_fingerprint: null }])

        await insertForeignBuildingSelection(store, 'sel_keyless', { createdBy: 'prn_a', origin: null })
        const key = (id: string, k: string | null) => store.db.updateTable('selections').set({ idempotency_key: k, request_fingerprint: 'sha256:f' }).where('id', '=', id).execute()
        await key('sel_old', 'prn_a\u001fk1')
        // the store itself refuses a second selection under one key, whatever the code above it does
        await assert.rejects(key('sel_keyless', 'prn_a\u001fk1'), (e) => isUniqueViolation(e))
        // the same key of another principal is another key
        await key('sel_keyless', 'prn_b\u001fk1')
      } finally {
        await drop()
      }
    })
  })
}
