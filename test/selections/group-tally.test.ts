import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { groupCounts } from '../../src/selections/freeze.js'
import { MemberWriter, type FrozenRow } from '../../src/selections/member-writer.js'
import { createTestStore, STORE_KINDS } from '../support/stores.js'

const FIELDS = ['status', 'owner', 'tags']

/** A building selection row the members can reference. */
async function building(store: Awaited<ReturnType<typeof createTestStore>>['store'], id: string): Promise<void> {
  await store.db
    .insertInto('selections')
    .values({ id, resource: 'r', environment: 'e', selector: '{}', fields: '[]', count: 0, digest: '', complete: 0, completeness: '{}', consistent_snapshot: 0, exclusions: '[]', groups: '[]', created_by: null, created_at: store.now(), expires_at: store.now(), state: 'building', origin: null })
    .execute()
}

// Every field present, as connectors deliver them (a missing key and a null would be two "null" groups in SQL).
// Strings whose text is another value's JSON ('null', '1', '"quoted"', '[]') must stay their own groups.
const rowArb = fc.record({
  status: fc.constantFrom('active', 'past_due', null, 'paused', 'null', '1', '"quoted"', '[]', 1, 0, true, 'true', ''),
  owner: fc.constantFrom('a@x', 'b@x', 'c@x', 'd@x', 'e@x'),
  tags: fc.constantFrom(['x'], ['x', 'y'], [], null),
  amount: fc.integer({ min: 0, max: 5 }),
})

for (const kind of STORE_KINDS) {
  describe(`group counts kept while the members stream in (${kind})`, () => {
    test('equal what the store counts over the frozen members (property over random rows and pages)', { timeout: 120_000 }, async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        let n = 0
        await fc.assert(
          fc.asyncProperty(fc.array(fc.array(rowArb, { maxLength: 30 }), { maxLength: 5 }), async (pages) => {
            const id = `sel_prop_${n++}`
            await building(store, id)
            const writer = new MemberWriter(store, id, [], FIELDS)
            let i = 0
            for (const page of pages) {
              const rows: FrozenRow[] = page.map((fields) => ({ id: `r${String(i++).padStart(5, '0')}`, version: '1', fields, source: 's' }))
              await writer.write(rows, [])
            }
            await writer.finish()
            const kept = await writer.groupCounts()
            const counted = await groupCounts(store, id, FIELDS, writer.count)
            // ties are listed by value text on both; PostgreSQL orders text by its collation, so compare as sets
            const asSet = (g: (typeof kept)[number]) => ({ ...g, values: [...g.values].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) })
            assert.deepEqual(kept.map(asSet), counted.map(asSet))
          }),
          { numRuns: kind === 'postgres' ? 25 : 60 },
        )
      } finally {
        await drop()
      }
    })

    test('a field with more distinct values than are kept in memory is counted by the store, exactly', { timeout: 120_000 }, async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        await building(store, 'sel_many')
        const writer = new MemberWriter(store, 'sel_many', [], ['serial', 'kind'])
        const total = 20_500
        for (let start = 0; start < total; start += 2500) {
          const rows: FrozenRow[] = Array.from({ length: Math.min(2500, total - start) }, (_, k) => {
            const i = start + k
            return { id: `r${String(i).padStart(6, '0')}`, version: '1', fields: { serial: `s${i}`, kind: i % 3 === 0 ? 'three' : 'other' }, source: 's' }
          })
          await writer.write(rows, [])
        }
        await writer.finish()
        const [serial, kindCounts] = await writer.groupCounts()
        assert.equal(serial!.field, 'serial')
        assert.equal(serial!.distinct, total)
        assert.equal(serial!.complete, false)
        assert.equal(serial!.values.length, 100)
        assert.equal(serial!.other_count, total - 100)
        assert.deepEqual(kindCounts!.values, [
          { value: 'other', count: total - Math.ceil(total / 3) },
          { value: 'three', count: Math.ceil(total / 3) },
        ])
      } finally {
        await drop()
      }
    })
  })
}
