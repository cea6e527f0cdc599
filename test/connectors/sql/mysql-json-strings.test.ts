import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { columnFactsOf, columnTypesOf } from '../../../src/connectors/sql/column-types.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A `string` field over a MySQL/MariaDB JSON column. MySQL 8's JSON is its own type: the server keeps it in a
 * binary form, sends it re-spelled in its normal form (`{"a":  1}` stored, `{"a": 1}` sent, `jsonStrings`) and
 * compares it as JSON (a string parameter is a JSON string, equal to no object): `eq` on the text a record shows
 * answered nothing, complete, a false proof of absence. Such a filter is refused, naming the column, as a BLOB is.
 * MariaDB's JSON is LONGTEXT under a json_valid check (the catalogue says longtext): read and compared as the text
 * it keeps, so it stays an ordinary text column, as measured here on the real engine.
 */
const FIELDS = { id: 'string', version: 'integer', doc: 'string', labels: 'tags' } as const

describe('sql on mysql: a string field over a JSON column', () => {
  it("MySQL 8's JSON (the catalogue's `json`) under a string field is a misfit naming the column and its type; tags over it are not", () => {
    const rows = [
      { name: 'id', type: 'varchar' },
      { name: 'version', type: 'int' },
      { name: 'doc', type: 'json' },
      { name: 'labels', type: 'json' },
    ]
    const facts = columnFactsOf({ fields: FIELDS, versionField: 'version', table: 'things' }, columnTypesOf('mysql', rows), 'mysql', { changedAfterUpdate: false, generatedFields: [] })
    assert.deepEqual(facts.misfits.map((m) => m.field), ['doc'], JSON.stringify(facts.misfits))
    assert.match(facts.misfits[0]!.problem, /column "doc" of table things is json: the server sends its JSON re-spelled in its normal form and compares it as JSON/)
  })

  describe('on MariaDB 10.11, the real engine', () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine('mysql')
      await engine.exec('create table things (id varchar(10) primary key, version int not null, doc json, labels json)')
      await engine.exec(`insert into things values ('a', 1, '{"a":  1}', '["x"]'), ('b', 1, '[1,2]', '["y"]')`)
    })
    after(() => engine?.drop())

    it('JSON is kept and shown as stored, and a filter on the shown text compares it: complete, truthfully', async () => {
      const [column] = await engine.rows(`select data_type from information_schema.columns where table_schema = database() and table_name = 'things' and column_name = 'doc'`)
      assert.equal(String(Object.values(column!)[0]).toLowerCase(), 'longtext')
      const connector = engine.connector('things', FIELDS)
      const all = await search(connector, {}, 10)
      assert.deepEqual(all.items.map((r) => r.fields.doc), ['{"a":  1}', '[1,2]'])
      const stored = await search(connector, { doc: '{"a":  1}' }, 10)
      assert.deepEqual([stored.items.map((r) => r.id), stored.complete], [['a'], true])
      const other = await search(connector, { doc: { not_in: ['{"a":  1}'] } }, 10)
      assert.deepEqual([other.items.map((r) => r.id), other.complete], [['b'], true])
    })
  })
})
