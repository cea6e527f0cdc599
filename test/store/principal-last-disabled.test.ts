import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { migrateToLatest, storeMigrations } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

/** The store as it was before a disable left a watermark. */
const BEFORE = Object.fromEntries(Object.entries(storeMigrations).filter(([name]) => name < '0014'))

for (const kind of STORE_KINDS) {
  describe(`migration 0014: a disable's watermark (${kind} store)`, () => {
    test('a principal disabled as the store migrates keeps its disable time as its watermark; an enabled one has none', async () => {
      const { store, drop } = await createTestStore(kind, { migrate: false })
      try {
        assert.equal((await migrateToLatest({ db: store.db, migrations: BEFORE })).error, undefined)
        const principal = (id: string, disabledAt: string | null) =>
          store.db.insertInto('principals').values({ id, name: id, role: 'reviewer', scopes: JSON.stringify({ resources: '*', actions: '*' }), created_at: '2030-01-01T00:00:00.000Z', disabled_at: disabledAt }).execute()
        await principal('prn_off', '2030-01-02T00:00:00.000Z')
        await principal('prn_on', null)
        const outcome = await store.migrate()
        assert.equal(outcome.error, undefined, outcome.error?.message)
        assert.ok(outcome.applied.includes('0014_principal_last_disabled'), JSON.stringify(outcome.applied))
        const rows = await store.db.selectFrom('principals').select(['id', 'disabled_at', 'last_disabled_at']).orderBy('id').execute()
        assert.deepEqual(rows, [
          { id: 'prn_off', disabled_at: '2030-01-02T00:00:00.000Z', last_disabled_at: '2030-01-02T00:00:00.000Z' },
          { id: 'prn_on', disabled_at: null, last_disabled_at: null },
        ])
      } finally {
        await drop()
      }
    })
  })
}
