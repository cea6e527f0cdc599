import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A string field over a column of integers, decimals or booleans is no misfit (a filter compares the text a record
 * shows), so a write of a string the column cannot keep as written was sent: PostgreSQL refused "abc" into an integer
 * (22P02, the target failed), MariaDB refused or zeroed it, SQLite kept it as TEXT among integers, and "042" or "1.5"
 * into numeric(10,2) came back "42" and "1.50". The write now judges the value against the column before anything is
 * sent (one write or a window), naming the field, the value and the column type; a value the column keeps ("42",
 * "12.50", "true") is written as before.
 */
const CASES: readonly { kind: Kind; column: string; shown: string; wrong: readonly string[]; right: string }[] = [
  { kind: 'sqlite', column: 'INTEGER', shown: 'INTEGER', wrong: ['abc', '42.5', '', '042', '-0'], right: '42' },
  { kind: 'sqlite', column: 'NUMERIC', shown: 'NUMERIC', wrong: ['abc', '1.50', '42.0'], right: '1.5' },
  { kind: 'sqlite', column: 'BOOLEAN', shown: 'BOOLEAN', wrong: ['true', '2'], right: '1' },
  { kind: 'postgres', column: 'integer', shown: 'integer', wrong: ['abc', '42.5', '', '042', '2147483648'], right: '42' },
  { kind: 'postgres', column: 'numeric(10,2)', shown: 'numeric(10,2)', wrong: ['abc', '1.5', '12', '123456789.00'], right: '12.50' },
  { kind: 'postgres', column: 'boolean', shown: 'boolean', wrong: ['t', 'yes', '1'], right: 'true' },
  { kind: 'mysql', column: 'int', shown: 'int', wrong: ['abc', '42.5', '', '042'], right: '42' },
  { kind: 'mysql', column: 'decimal(10,2)', shown: 'decimal', wrong: ['abc', '1.5', '1.234'], right: '12.50' },
]

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a string written into a column of numbers or booleans`, () => {
    let engine: Engine
    before(async () => void (engine = await createEngine(kind)))
    after(async () => void (await engine?.drop()))

    CASES.filter((c) => c.kind === kind).forEach(({ column, shown, wrong, right }, n) => {
      const table = `codes_${n}`
      let connector: SqlConnector
      before(async () => {
        await engine.exec(`create table ${table} (id varchar(10) primary key, version integer not null, v ${column})`)
        await engine.exec(`insert into ${table} (id, version, v) values ('a', 1, null), ('b', 1, null)`)
        connector = engine.connector(table, { id: 'string', version: 'integer', v: 'string' })
      })

      it(`${column}: ${wrong.map((w) => JSON.stringify(w)).join(', ')} refused before anything is sent, naming the field, the value and the column type`, async () => {
        for (const value of wrong) {
          await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { v: value }, precondition: {} }), (error: any) => {
            assert.equal(error.code, 'invalid_request', `${value}: ${error.message}`)
            assert.match(error.message, new RegExp(`sets "v" to ${JSON.stringify(value).replace(/[.]/g, '\\.')} where field "v" is declared string, but column "v" of table ${table} is ${shown.replace(/[()]/g, '\\$&')}, which keeps .*nothing was written`))
            assert.deepEqual(error.details, { field: 'v', value, column_type: shown })
            return true
          })
        }
        if (connector.writeWindow) await assert.rejects(connector.writeWindow(['a', 'b'].map((id) => ({ id, expectedVersion: '1', set: { v: wrong[0] }, precondition: {} }))), /nothing was written/)
        assert.deepEqual(await engine.rows(`select id, version, v from ${table} order by id`), [{ id: 'a', version: 1, v: null }, { id: 'b', version: 1, v: null }])
      })

      it(`${column}: ${JSON.stringify(right)} is written and read back as written`, async () => {
        const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { v: right }, precondition: {} })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'written' ? outcome.record?.fields.v : undefined, right)
      })
    })
  })
}
