import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide } from '../../../src/contract/index.js'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'

// An id column no key makes unique (a view over a join, a log-like table without a primary key). The keyset walk
// `WHERE id > last ORDER BY id` would skip every row that shares the last id of a page, and two rows of one id
// in a page are one record: either way a row is never returned. The walk must then not be complete, and say
// which column and what to do; a table whose key proves the id unique walks as before.
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const NOT_UNIQUE = /column "id" of table things is not unique.*declare a primary key or a unique index on "id", or choose a unique column as id_field/

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[]) {
  describe(`sql: an id column that is not unique (${kind})`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table things (id varchar(20), status varchar(20), version integer not null)')
      await engine.exec("insert into things values ('a', 'active', 1), ('a', 'past_due', 1), ('b', 'active', 1)")
      await engine.exec('create view things_view as select id, status, version from things')
      await engine.exec('create table keyed (id varchar(20) not null, status varchar(20), version integer not null, unique (id))')
      await engine.exec("insert into keyed values ('a', 'active', 1), ('b', 'past_due', 1), ('c', 'active', 1)")
      await engine.exec('create table distinct_ids (id varchar(20), status varchar(20), version integer not null)')
      await engine.exec("insert into distinct_ids values ('a', 'active', 1), ('b', 'past_due', 1), ('c', 'active', 1)")
    })
    after(() => engine?.drop())

    for (const table of ['things', 'things_view'])
      for (const pageSize of [1, 2, 100]) {
        it(`${table}: a walk in pages of ${pageSize} is not complete, and says the id is not unique`, async () => {
          const envelope = await search(engine.connector(table, FIELDS), {}, pageSize)
          assert.equal(envelope.complete, false, `returned ${JSON.stringify(envelope.items.map((i) => [i.id, i.fields.status]))} and said complete`)
          const reason = envelope.incomplete_reasons.find((r) => /not unique/.test(r.message))
          assert.match(reason?.message ?? JSON.stringify(envelope.incomplete_reasons), new RegExp(NOT_UNIQUE.source.replace('table things', `table ${table}`)))
        })
      }

    it('absence of a row hidden behind a repeated id is not proven', async () => {
      const envelope = await search(engine.connector('things', FIELDS), { status: { in: ['past_due', 'active'] } }, 1)
      assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
    })

    it('a unique key on the id: the walk is complete, in pages of any size', async () => {
      for (const pageSize of [1, 2, 100]) {
        const envelope = await search(engine.connector('keyed', FIELDS), {}, pageSize)
        assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
        assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'c'])
      }
    })

    it('no key, but no id repeats: checked page by page, the walk is complete', async () => {
      for (const pageSize of [1, 2, 100]) {
        const envelope = await search(engine.connector('distinct_ids', FIELDS), {}, pageSize)
        assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
        assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'c'])
      }
    })
  })
}

// MariaDB's default collation (utf8mb4_general_ci) makes 'a' = 'A' and 'x' = 'x ': ids JavaScript tells apart,
// no duplicate to see, and still `id > 'a'` skips 'A'. Under a unique index the engine keeps only one of each.
describe('sql: ids equal under a case-insensitive collation (mysql)', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table things (id varchar(20) collate utf8mb4_general_ci, status varchar(20), version integer not null, key (id)) engine=InnoDB')
    await engine.exec("insert into things values ('a', 'active', 1), ('A', 'past_due', 1), ('x', 'active', 1), ('x ', 'past_due', 1)")
    await engine.exec('create table keyed (id varchar(20) collate utf8mb4_general_ci primary key, status varchar(20), version integer not null) engine=InnoDB')
    await engine.exec("insert into keyed values ('a', 'active', 1), ('B', 'past_due', 1), ('c', 'active', 1)")
  })
  after(() => engine?.drop())

  it('a walk in pages of 1 is not complete, and says the id is not unique', async () => {
    const envelope = await search(engine.connector('things', FIELDS), {}, 1)
    assert.equal(envelope.complete, false, `returned ${JSON.stringify(envelope.items.map((i) => i.id))} and said complete`)
    assert.match(envelope.incomplete_reasons.map((r) => r.message).join('; '), NOT_UNIQUE)
  })

  it('in one page every row is returned: nothing was skipped, and the walk is complete', async () => {
    const envelope = await search(engine.connector('things', FIELDS), {}, 100)
    assert.deepEqual(envelope.items.map((i) => i.id).sort(), ['A', 'a', 'x', 'x '])
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
  })

  it('a unique key under the collation: the walk is complete, in the engine order', async () => {
    const envelope = await search(engine.connector('keyed', FIELDS), {}, 1)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'B', 'c'])
  })

  it('a read by an id the collation calls equal to a stored one, but spelled otherwise, is neither found nor missing', async () => {
    const result = await engine.connector('keyed', FIELDS).readByIds(['A', 'b ', 'c', 'zz'])
    assert.deepEqual([...result.records.keys()], ['c'])
    assert.deepEqual(result.missing, ['zz'])
    assert.deepEqual(result.failed.map((f) => f.id).sort(), ['A', 'b '])
    assert.match(result.failed.find((f) => f.id === 'A')!.message, /matches the row stored as "a".*use the id as the table stores it/)
  })
})
