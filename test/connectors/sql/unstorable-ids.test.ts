import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'

// A SQLite TEXT or a MySQL VARCHAR column holds a NUL; PostgreSQL text cannot, so a row keyed by one could not be
// frozen in a PostgreSQL store (a raw error, answered 500) and is no id the store keeps exactly. A row whose id or
// version holds one is counted as unjudged, naming the field, and the answer is not complete. (A lone surrogate
// never comes out of these drivers: they read text as UTF-8, replacing what is not.)
const FIELDS = { id: 'string', status: 'string', version: 'string' }
const NUL: Record<Exclude<Kind, 'postgres'>, string> = { sqlite: 'char(0)', mysql: 'char(0)' }
const concat = (kind: Exclude<Kind, 'postgres'>, a: string, b: string) => (kind === 'sqlite' ? `'${a}' || ${NUL[kind]} || '${b}'` : `concat('${a}', ${NUL[kind]}, '${b}')`)

for (const kind of ['sqlite', 'mysql'] as const) {
  describe(`sql: ids and versions holding a NUL (${kind})`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table odd (id varchar(20) primary key, status varchar(20), version varchar(20) not null)')
      await engine.exec(`insert into odd values ('a', 's', '1'), (${concat(kind, 'b', 'x')}, 's', '1'), ('c', 's', ${concat(kind, '2', '')}), ('d', 's', '1')`)
    })
    after(() => engine?.drop())

    for (const pageSize of [1, 2, 100])
      it(`pages of ${pageSize}: the rows are counted as unjudged on the id and the version, never answered`, async () => {
        const envelope = await search(engine.connector('odd', FIELDS), {}, pageSize)
        assert.deepEqual(
          envelope.items.map((i) => i.id),
          ['a', 'd'],
        )
        assert.equal(envelope.complete, false)
        const shape = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
        assert.ok(shape, JSON.stringify(envelope.incomplete_reasons))
        assert.deepEqual([shape.fields, shape.record_count], [['id', 'version'], 2])
      })

    it('a read by id of a row whose version holds a NUL fails, saying why, without the NUL', async () => {
      const read = await engine.connector('odd', FIELDS).readByIds(['a', 'c'])
      assert.deepEqual([...read.records.keys()], ['a'])
      assert.equal(read.failed.length, 1)
      assert.equal(read.failed[0]!.id, 'c')
      assert.match(read.failed[0]!.message, /"version" as another type than string.*NUL/)
      assert.ok(!read.failed[0]!.message.includes('\0'))
    })
  })
}
