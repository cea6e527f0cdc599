import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Kysely } from 'kysely'
import { migrateToLatest, storeMigrations } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

/** The store as it was before a target kept its member's source. */
const BEFORE = Object.fromEntries(Object.entries(storeMigrations).filter(([name]) => name < '0017'))
const AT = '2030-01-01T00:00:00.000Z'

/** A frozen selection and its members (ord, record id, source), as the 0016-era freeze wrote them. */
async function selection(db: Kysely<any>, id: string, members: readonly (readonly [number, string, string | null])[]): Promise<void> {
  await db
    .insertInto('selections')
    .values({ id, resource: 'things', environment: 'test', selector: '{}', fields: '["id"]', count: members.length, digest: `d_${id}`, complete: 1, completeness: '{}', consistent_snapshot: 0, exclusions: '[]', groups: '[]', created_at: AT, expires_at: AT, state: 'frozen' })
    .execute()
  await db
    .insertInto('selection_members')
    .values(members.map(([ord, recordId, source]) => ({ selection_id: id, ord, record_id: recordId, version: null, fields: JSON.stringify({ id: recordId }), source })))
    .execute()
}

/** A plan on the selection, its operation and one target per (ord, record id), as 0016-era commit code wrote them. */
async function operation(db: Kysely<any>, id: string, selectionId: string, targets: readonly (readonly [number, string])[]): Promise<void> {
  const planId = `pln_${id}`
  await db
    .insertInto('plans')
    .values({ id: planId, selection_id: selectionId, resource: 'things', environment: 'test', action: '{"type":"close","params":{}}', action_type: 'close', plan_digest: `pd_${id}`, selection_digest: `d_${selectionId}`, target_count: targets.length, changes_summary: '{}', policy: '{}', state: 'committed', proposed_by: 'prn_a', created_at: AT })
    .execute()
  await db
    .insertInto('operations')
    .values({ id, plan_id: planId, idempotency_key: `k_${id}`, request_fingerprint: 'f', state: 'pending', stop_rules: '{}', counts: '{}', created_by: 'prn_a', created_at: AT, updated_at: AT })
    .execute()
  await db
    .insertInto('operation_targets')
    .values(targets.map(([ord, recordId]) => ({ operation_id: id, ord, record_id: recordId, state: 'pending', updated_at: AT })))
    .execute()
}

for (const kind of STORE_KINDS) {
  describe(`migration 0017: targets committed before it take their member's source (${kind} store)`, () => {
    test("each target gets the source of its plan's selection member at its ord with its record id; anything less certain stays null", async () => {
      const { store, drop } = await createTestStore(kind, { migrate: false })
      try {
        assert.equal((await migrateToLatest({ db: store.db, migrations: BEFORE })).error, undefined)
        const db = store.db as unknown as Kysely<any>
        await selection(db, 'sel_1', [
          [1, 'a', 'odd'],
          [2, 'b', 'annex'],
          [3, 'c', 'odd'],
          [4, 'd', null],
        ])
        // another selection holding the same ords and ids on other sources: only the operation's own selection counts
        await selection(db, 'sel_2', [
          [1, 'a', 'annex'],
          [2, 'b', 'odd'],
        ])
        // ord 3 names record "x", its member there is "c": not certainly that member, left null
        await operation(db, 'op_1', 'sel_1', [
          [1, 'a'],
          [2, 'b'],
          [3, 'x'],
          [4, 'd'],
        ])
        await operation(db, 'op_2', 'sel_2', [
          [1, 'a'],
          [2, 'b'],
        ])
        const outcome = await store.migrate()
        assert.equal(outcome.error, undefined, outcome.error?.message)
        assert.ok(outcome.applied.includes('0017_target_source'), JSON.stringify(outcome.applied))
        const rows = await db.selectFrom('operation_targets').select(['operation_id', 'ord', 'record_id', 'source']).orderBy('operation_id').orderBy('ord').execute()
        assert.deepEqual(
          rows.map((r) => ({ ...r, ord: Number(r.ord) })),
          [
            { operation_id: 'op_1', ord: 1, record_id: 'a', source: 'odd' },
            { operation_id: 'op_1', ord: 2, record_id: 'b', source: 'annex' },
            { operation_id: 'op_1', ord: 3, record_id: 'x', source: null },
            { operation_id: 'op_1', ord: 4, record_id: 'd', source: null },
            { operation_id: 'op_2', ord: 1, record_id: 'a', source: 'annex' },
            { operation_id: 'op_2', ord: 2, record_id: 'b', source: 'odd' },
          ],
        )
      } finally {
        await drop()
      }
    })
  })
}
