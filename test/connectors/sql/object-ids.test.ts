import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'
import { idRefusedTests } from './support/refused-ids.js'

/**
 * A PostgreSQL id column of a type the driver reads as an object or an array (interval, json/jsonb, an array type,
 * or a domain over one): each row's id was that object as text, "[object Object]" for every interval or jsonb row
 * ("1,2" for the int arrays {1,2} and the text array {"1,2"} alike), so a walk of a table keyed by interval answered
 * every row under one id and said complete, and no read or write by that id could find its row. Such a column is
 * refused as an id, reads and writes alike, naming the column's type and the fix.
 */
const CASES = [
  { type: 'interval', setup: [], values: [`'1 day'`, `'25 hours'`, `'1 mon'`] },
  { type: 'jsonb', setup: [], values: [`'{"a":1}'`, `'{"b":2}'`] },
  { type: 'integer[]', setup: [], values: [`'{1,2}'`, `'{3}'`] },
  { type: 'key_span', setup: ['create domain key_span as interval'], values: [`'1 day'`, `'2 days'`] },
] as const

for (const { type, setup, values } of CASES) {
  describe(`sql connector on postgres: an id column of type ${type}`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine('postgres')
      for (const statement of setup) await engine.exec(statement)
      await engine.exec(`create table things (id ${type} primary key, version int not null, name text)`)
      await engine.exec(`insert into things values ${values.map((v) => `(${v}, 1, 'n')`).join(', ')}`)
      connector = engine.connector('things', { id: 'string', version: 'integer', name: 'string' })
    })
    after(async () => {
      await engine?.drop()
    })

    const REFUSAL = new RegExp(`id column "id" of table things is ${type.replace(/[[\]]/g, '\\$&')}, which the driver reads as .*choose another id column`)

    idRefusedTests(() => connector, REFUSAL, { read: ['[object Object]', '1 day'], write: '[object Object]' }, async () => {
      assert.deepEqual(await engine.rows(`select distinct version, name from things`), [{ version: 1, name: 'n' }])
    })
  })
}
