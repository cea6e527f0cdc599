import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A field declared `string` over a date or timestamp column: a record shows its value as toISOString spells it
 * ("2024-06-01T12:00:00.000Z"), while the engine compared the column's own text ("2024-06-01 12:00:00"). A filter
 * for the value a record shows matched nothing and `lt` ordered a space before "T", and both answers said they
 * were complete. Such a filter is now refused, naming the column and the fix; reads without one still work.
 */
const TYPES = { postgres: ['timestamptz', 'date'], mysql: ['datetime(3)', 'date'] } as const

for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a string field over a date column`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id varchar(16) primary key, version int not null, at ${TYPES[kind][0]}, d ${TYPES[kind][1]})`)
      await engine.exec(`insert into things values ('a', 1, '2024-06-01 12:00:00', '2024-06-01'), ('b', 1, '2024-06-01 13:00:00', '2024-06-02')`)
    })
    after(() => engine?.drop())

    const filters: Filter[] = [{ at: { eq: '2024-06-01T12:00:00.000Z' } }, { at: { lt: '2024-06-01T12:30:00.000Z' } }, { d: { in: ['2024-06-01T00:00:00.000Z'] } }]
    for (const filter of filters)
      it(`${JSON.stringify(filter)} is refused, naming the column and the fix; nothing is claimed`, async () => {
        const envelope = await search(engine.connector('things', { id: 'string', version: 'integer', at: 'string', d: 'string' }), filter, 10)
        assert.deepEqual([envelope.items, envelope.complete], [[], false])
        const field = Object.keys(filter)[0]
        assert.match(envelope.incomplete_reasons[0]?.message ?? '', new RegExp(`field "${field}" is declared string, but column "${field}" of table things is .*: the database compares its values as dates and times, not as the text a record shows`))
      })

    it('a read without such a filter shows the values, and the same fields declared timestamp filter by instant', async () => {
      const all = await search(engine.connector('things', { id: 'string', version: 'integer', at: 'string', d: 'string' }), {}, 10)
      assert.equal(all.complete, true)
      assert.deepEqual(all.items.map((r) => r.fields.at), ['2024-06-01T12:00:00.000Z', '2024-06-01T13:00:00.000Z'])
      const timestamps = engine.connector('things', { id: 'string', version: 'integer', at: 'timestamp', d: 'timestamp' })
      const before = await search(timestamps, { at: { lt: '2024-06-01T12:30:00.000Z' } }, 10)
      assert.deepEqual([before.items.map((r) => r.id), before.complete], [['a'], true])
    })
  })
}
