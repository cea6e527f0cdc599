import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * MariaDB and MySQL store some values otherwise than written without failing the UPDATE, even in strict mode: a
 * DECIMAL(10,2) rounds 1.234 to 1.23, a CHAR drops trailing spaces, a DATETIME without fractions cuts the
 * milliseconds, a FLOAT keeps 24 bits, an INT column reads "007" as 7. Without STRICT in sql_mode a value too long
 * is cut and a number out of range clamped the same way. The write was committed and answered `written` with the
 * value the row holds: an approved 1.234 became 1.23. The row is read back before COMMIT, so such a write is
 * refused and rolled back, nothing written, naming the field, the value asked and the value the column keeps.
 */
describe('sql connector on MariaDB: a value the column would keep otherwise', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varchar(10) primary key, version int not null, amount decimal(10,2), code char(5),
      at datetime, ratio float, ref int, note varchar(20)) engine = InnoDB`)
    await engine.exec(`insert into things values ('r1', 1, 1.00, 'a', '2024-01-01 00:00:00', 1, 1, 'n')`)
    connector = engine.connector('things', { id: 'string', version: 'integer', amount: 'number', code: 'string', at: 'timestamp', ratio: 'number', ref: 'string', note: 'string' })
  })
  after(async () => {
    await engine?.drop()
  })

  const cases: [Record<string, unknown>, string][] = [
    [{ code: 'ab ' }, 'column "code" of record "r1" would hold "ab" where "ab " was asked'],
  ]
  for (const [set, message] of cases) {
    it(`${JSON.stringify(set)}: refused and rolled back, naming what the column would keep`, async () => {
      const outcome = await connector.write({ id: 'r1', expectedVersion: '1', set, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.ok(outcome.kind === 'rejected' && outcome.message.includes(message) && /nothing was written/.test(outcome.message), JSON.stringify(outcome))
      assert.deepEqual(await engine.rows(`select version, note from things where id = 'r1'`), [{ version: 1, note: 'n' }])
    })
  }

  // a number a DECIMAL(10,2) would round (1.234 as 1.23) is refused before the UPDATE is sent (number-over-decimal-columns.test.ts)
  it('{"amount":1.234}: refused before anything is sent, naming what the column keeps', async () => {
    await assert.rejects(connector.write({ id: 'r1', expectedVersion: '1', set: { amount: 1.234 }, precondition: {} }), /sets "amount" to 1\.234 where column "amount" of table things is decimal\(10,2\), which keeps only numbers with at most 2 digit\(s\) after the point.*nothing was written/)
    assert.deepEqual(await engine.rows(`select version, note from things where id = 'r1'`), [{ version: 1, note: 'n' }])
  })

  // an instant a DATETIME would cut (.700 to .000) is refused before the UPDATE is sent (coarse-timestamp-sets.test.ts)
  it('{"at":"2024-01-01T00:00:00.700Z"}: refused before anything is sent, naming what the column keeps', async () => {
    await assert.rejects(connector.write({ id: 'r1', expectedVersion: '1', set: { at: '2024-01-01T00:00:00.700Z' }, precondition: {} }), /sets "at" to "2024-01-01T00:00:00\.700Z" where column "at" of table things is datetime, which keeps a string as written only when it is an instant in whole seconds.*nothing was written/)
    assert.deepEqual(await engine.rows(`select version, note from things where id = 'r1'`), [{ version: 1, note: 'n' }])
  })

  // a number a FLOAT would keep otherwise (16777217 read back as 16777200) is refused before the UPDATE is sent (mysql-float-sets.test.ts)
  it('{"ratio":16777217}: refused before anything is sent, naming what the column keeps', async () => {
    await assert.rejects(connector.write({ id: 'r1', expectedVersion: '1', set: { ratio: 16777217 }, precondition: {} }), /sets "ratio" to 16777217 where column "ratio" of table things is float, which keeps only numbers a single-precision float stores.*nothing was written/)
    assert.deepEqual(await engine.rows(`select version, note from things where id = 'r1'`), [{ version: 1, note: 'n' }])
  })

  // a string an INT column would keep otherwise ("007" as 7) is now refused before the UPDATE is sent (string-set-values.test.ts)
  it('{"ref":"007","note":"x"}: refused before anything is sent, naming what the column keeps', async () => {
    await assert.rejects(connector.write({ id: 'r1', expectedVersion: '1', set: { ref: '007', note: 'x' }, precondition: {} }), /sets "ref" to "007" where .* is int, which keeps .*nothing was written/)
    assert.deepEqual(await engine.rows(`select version, note from things where id = 'r1'`), [{ version: 1, note: 'n' }])
  })

  it('values the column keeps as asked are written (a number as its decimal, a timestamp in any spelling)', async () => {
    const outcome = await connector.write({ id: 'r1', expectedVersion: '1', set: { amount: 2.5, at: '2024-06-01T12:00:00+02:00', ref: '8', code: 'abc' }, precondition: {} })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    assert.deepEqual(await engine.rows(`select version, amount, ref from things where id = 'r1'`), [{ version: 2, amount: '2.50', ref: 8 }])
  })
})
