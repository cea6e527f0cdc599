import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A filter on a field whose column the engine compares otherwise than the field is declared is refused (a string
 * over a DATETIME, a number over text); a write's precondition on one was sent as it is: SQLite compared 5 with
 * the text '5.0' as text ('5' ≠ '5.0') where the plan, on the value the record shows (5), said it held; the
 * server engines compared a string with a date column as a date. Such a write is now refused before anything is
 * sent, naming the field, the column and the fix; a precondition on a fitting field still writes.
 */
const CASES: readonly { kind: Kind; column: string; shown?: string; value: string; field: string; precondition: Filter }[] = [
  { kind: 'sqlite', column: 'text', shown: 'TEXT', value: `'5.0'`, field: 'number', precondition: { v: 5 } },
  { kind: 'postgres', column: 'timestamptz', shown: 'timestamp with time zone', value: `'2024-06-01 12:00:00+00'`, field: 'string', precondition: { v: { lt: '2024-06-01T12:00:00.000Z' } } },
  { kind: 'mysql', column: 'datetime', value: `'2024-06-01 12:00:00'`, field: 'string', precondition: { v: '2024-06-01T12:00:00.000Z' } },
]

for (const { kind, column, shown = column, value, field, precondition } of CASES) {
  describe(`sql on ${kind}: a precondition on a ${field} field over a ${column} column`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id varchar(10) primary key, version integer not null, v ${column}, name varchar(10))`)
      await engine.exec(`insert into things (id, version, v, name) values ('a', 1, ${value}, 'n'), ('b', 1, ${value}, 'n')`)
      connector = engine.connector('things', { id: 'string', version: 'integer', v: field, name: 'string' })
    })
    after(async () => {
      await engine?.drop()
    })

    const REFUSAL = new RegExp(`field "v" is declared ${field}, but column "v" of table things is ${shown}.*a precondition on it would be compared by the database otherwise than the plan compared it, and nothing was written; declare it ${kind === 'sqlite' ? 'one of string, tags or timestamp' : 'timestamp'}, or change the column`)

    it('a write is refused before anything is sent, naming the field, the column and the fix', async () => {
      await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { name: 'x' }, precondition }), REFUSAL)
      assert.deepEqual(await engine.rows(`select version, name from things where id = 'a'`), [{ version: 1, name: 'n' }])
    })

    it('a window of writes is refused the same way', { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
      const requests = ['a', 'b'].map((id) => ({ id, expectedVersion: '1', set: { name: 'x' }, precondition }))
      await assert.rejects(connector.writeWindow!(requests), REFUSAL)
      assert.deepEqual(await engine.rows(`select version, name from things order by id`), [{ version: 1, name: 'n' }, { version: 1, name: 'n' }])
    })

    it('a precondition on a fitting field still writes', async () => {
      const outcome = await connector.write({ id: 'b', expectedVersion: '1', set: { name: 'x' }, precondition: { name: 'n' } })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    })
  })
}
