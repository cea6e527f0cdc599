import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide } from '../../../src/contract/index.js'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'

// A row whose id is NULL names no record. `id > last` never reaches it (PostgreSQL sorts NULLs last, so past the
// first page it was never read), and where NULLs sort first (SQLite, MariaDB) the first page showed it as a
// record "null". Such rows are counted instead: the answer is not complete, naming the id field, and the rows
// with an id are read as ever. A SQLite TEXT PRIMARY KEY takes NULLs, and so does a unique index elsewhere.
const FIELDS = { id: 'string', status: 'string', version: 'integer' }

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[]) {
  describe(`sql: rows without an id (${kind})`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      const key = kind === 'sqlite' ? 'primary key' : 'unique'
      await engine.exec(`create table keyed (id varchar(20) ${key}, status varchar(20), version integer not null)`)
      await engine.exec("insert into keyed values (null, 'active', 1), (null, 'past_due', 1), ('a', 'active', 1), ('b', 'active', 1), ('c', 'past_due', 1)")
      await engine.exec('create table loose (id varchar(20), status varchar(20), version integer not null)')
      await engine.exec("insert into loose values (null, 'active', 1), ('a', 'active', 1), ('b', 'active', 1)")
      await engine.exec('create table clean (id varchar(20) unique, status varchar(20), version integer not null)')
      await engine.exec("insert into clean values ('a', 'active', 1), ('b', 'active', 1), ('c', 'past_due', 1)")
    })
    after(() => engine?.drop())

    for (const table of ['keyed', 'loose'])
      for (const pageSize of [1, 2, 100])
        it(`${table}: pages of ${pageSize} return every row with an id and count the rows without, not complete`, async () => {
          const envelope = await search(engine.connector(table, FIELDS), {}, pageSize)
          assert.deepEqual(envelope.items.map((i) => i.id).sort(), table === 'keyed' ? ['a', 'b', 'c'] : ['a', 'b'])
          assert.equal(envelope.complete, false)
          const shape = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
          assert.ok(shape, JSON.stringify(envelope.incomplete_reasons))
          const idless = table === 'keyed' ? 2 : 1
          assert.equal(shape.message, `${idless} row(s) of source "things-db" that meet the filter have no id ("id" is NULL): they name no record, so no change could address them, and they are not in the result (give them ids, or filter them out with {"id": {"is_null": false}})`)
          assert.deepEqual([shape.fields, shape.record_count], [['id'], idless])
        })

    it('the way out the reason names works: filtered on a present id, the answer is complete', async () => {
      const envelope = await search(engine.connector('keyed', FIELDS), { id: { is_null: false } }, 1)
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'c'])
    })

    it('a filter counts only the id-less rows it matches: none matched, the answer is complete', async () => {
      const none = await search(engine.connector('keyed', FIELDS), { status: 'trialing' }, 1)
      assert.equal(none.complete, true, JSON.stringify(none.incomplete_reasons))
      const some = await search(engine.connector('keyed', FIELDS), { status: 'past_due' }, 1)
      assert.deepEqual(some.items.map((i) => i.id), ['c'])
      assert.equal(some.complete, false)
      assert.notEqual(decide(some, 'prove_absence').decision, 'proceed')
    })

    it('a unique id column without NULLs walks complete', async () => {
      for (const pageSize of [1, 2, 100]) {
        const envelope = await search(engine.connector('clean', FIELDS), {}, pageSize)
        assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
        assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'c'])
      }
    })
  })
}
