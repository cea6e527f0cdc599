import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A write setting a field whose column holds another type than the field is declared (a boolean into a PostgreSQL
 * integer, a number or a boolean into a SQLite or MariaDB text column) was sent as it is: PostgreSQL refused it
 * ("invalid input syntax for type integer"), SQLite and MariaDB kept the value as text ('1', '5'), which a record then
 * shows as a string where a boolean or a number was approved. The same judgement that refuses a filter on such a field
 * (`misfitOf`) now refuses the write before anything is sent, one write or a window, naming the field, the value's
 * type and the column's type; null (the column's "none") and fitting fields still write.
 */
const CASES: readonly { kind: Kind; column: string; shown?: string; field: string; value: unknown; valueType: string }[] = [
  { kind: 'postgres', column: 'integer', field: 'boolean', value: true, valueType: 'a boolean' },
  { kind: 'sqlite', column: 'text', shown: 'TEXT', field: 'number', value: 5, valueType: 'a number' },
  { kind: 'sqlite', column: 'varchar(10)', shown: 'varchar(10)', field: 'boolean', value: false, valueType: 'a boolean' },
  { kind: 'mysql', column: 'varchar(10)', shown: 'varchar', field: 'boolean', value: true, valueType: 'a boolean' },
]

const KINDS: readonly Kind[] = ['sqlite', 'postgres', 'mysql']

for (const kind of KINDS) {
  describe(`sql on ${kind}: a write setting a field over a column of another type`, () => {
    let engine: Engine
    before(async () => void (engine = await createEngine(kind)))
    after(async () => void (await engine?.drop()))

    CASES.filter((c) => c.kind === kind).forEach(({ column, shown = column, field, value, valueType }, n) => {
      const table = `things_${n}`
      let connector: SqlConnector
      before(async () => {
        await engine.exec(`create table ${table} (id varchar(10) primary key, version integer not null, v ${column}, name varchar(10))`)
        await engine.exec(`insert into ${table} (id, version, v, name) values ('a', 1, null, 'n'), ('b', 1, null, 'n'), ('c', 1, null, 'n')`)
        connector = engine.connector(table, { id: 'string', version: 'integer', v: field, name: 'string' })
      })
      const REFUSAL = new RegExp(`sets "v" to ${valueType} where field "v" is declared ${field}, but column "v" of table ${table} is ${shown.replace(/[()]/g, '\\$&')}: .*nothing was written`)

      it(`${field} over ${column}: refused before anything is sent, naming the field, the value type and the column type`, async () => {
        await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { v: value }, precondition: {} }), (error: any) => {
          assert.equal(error.code, 'invalid_request')
          assert.match(error.message, REFUSAL)
          assert.deepEqual(error.details, { field: 'v', value_type: valueType, column_type: shown })
          return true
        })
        assert.deepEqual(await engine.rows(`select version, v from ${table} where id = 'a'`), [{ version: 1, v: null }])
      })

      it(`${field} over ${column}: a window of such writes is refused the same way`, { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
        const requests = ['a', 'b'].map((id) => ({ id, expectedVersion: '1', set: { v: value }, precondition: {} }))
        await assert.rejects(connector.writeWindow!(requests), REFUSAL)
        assert.deepEqual(await engine.rows(`select version, v from ${table} where id in ('a', 'b') order by id`), [{ version: 1, v: null }, { version: 1, v: null }])
      })

      it(`${field} over ${column}: null into it, and a fitting field, still write`, async () => {
        const cleared = await connector.write({ id: 'b', expectedVersion: '1', set: { v: null }, precondition: {} })
        assert.equal(cleared.kind, 'written', JSON.stringify(cleared))
        const renamed = await connector.write({ id: 'c', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
        assert.equal(renamed.kind, 'written', JSON.stringify(renamed))
        assert.deepEqual(await engine.rows(`select name from ${table} where id = 'c'`), [{ name: 'x' }])
      })
    })
  })
}
