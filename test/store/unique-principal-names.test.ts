import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createPrincipalStore } from '../../src/auth/index.js'
import { migrateToLatest, storeMigrations } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

/** The store as it was before principal names were unique. */
const BEFORE = Object.fromEntries(Object.entries(storeMigrations).filter(([name]) => name < '0006'))

for (const kind of STORE_KINDS) {
  describe(`migration 0006: one name, one principal (${kind} store)`, () => {
    test('an old store with duplicate names migrates: the earliest keeps the name, later ones are renamed NAME~N, every token keeps working', async () => {
      const { store, drop } = await createTestStore(kind, { migrate: false })
      try {
        assert.equal((await migrateToLatest({ db: store.db, migrations: BEFORE })).error, undefined)
        const principal = (id: string, name: string, role: string, at: string) =>
          store.db.insertInto('principals').values({ id, name, role: role as 'reviewer', scopes: JSON.stringify({ resources: '*', actions: '*' }), created_at: at, disabled_at: null }).execute()
        await principal('prn_a', 'rev1', 'reviewer', '2030-01-01T00:00:00.000Z')
        await principal('prn_b', 'rev1', 'reviewer', '2030-01-02T00:00:00.000Z')
        await principal('prn_c', 'rev1', 'admin', '2030-01-03T00:00:00.000Z')
        // a name that already looks like a renamed one is skipped over, not collided with
        await principal('prn_d', 'rev1~2', 'reviewer', '2030-01-04T00:00:00.000Z')
        await principal('prn_e', 'solo', 'agent', '2030-01-05T00:00:00.000Z')
        // "Rev1" reads as the same reviewer as "rev1": a case variant is a duplicate too
        await principal('prn_g', 'Rev1', 'reviewer', '2030-01-06T00:00:00.000Z')

        const outcome = await store.migrate()
        assert.equal(outcome.error, undefined, outcome.error?.message)
        assert.equal(outcome.applied[0], '0006_unique_principal_names', 'migrations after it follow')
        const names = await store.db.selectFrom('principals').select(['id', 'name', 'role']).orderBy('id').execute()
        assert.deepEqual(names, [
          { id: 'prn_a', name: 'rev1', role: 'reviewer' },
          { id: 'prn_b', name: 'rev1~3', role: 'reviewer' },
          { id: 'prn_c', name: 'rev1~4', role: 'admin' },
          { id: 'prn_d', name: 'rev1~2', role: 'reviewer' },
          { id: 'prn_e', name: 'solo', role: 'agent' },
          { id: 'prn_g', name: 'Rev1~5', role: 'reviewer' },
        ])

        // From now on the store itself refuses a second principal under a name, whatever the code above it does.
        await assert.rejects(
          store.db.insertInto('principals').values({ id: 'prn_f', name: 'rev1', role: 'reviewer', scopes: '{}', created_at: '2030-02-01T00:00:00.000Z', disabled_at: null }).execute(),
        )
        // the index is on the folded name: a case variant inserted beside the code's check is refused by the store
        await assert.rejects(
          store.db.insertInto('principals').values({ id: 'prn_h', name: 'SOLO', role: 'agent', scopes: '{}', created_at: '2030-02-01T00:00:00.000Z', disabled_at: null }).execute(),
        )
        await assert.rejects(createPrincipalStore(store).issue({ name: 'solo', role: 'agent' }), (e: any) => e.code === 'conflict')
      } finally {
        await drop()
      }
    })
  })
}
