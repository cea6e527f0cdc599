import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { assertColumnsFit } from '../../../src/plans/set-types.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A MySQL/MariaDB FLOAT keeps a single-precision value, which MariaDB sends with 6 significant digits: 123456.7 is
 * read back as 123457, 16777216 as 16777200. Such a number was refused only when the row was read back after the
 * UPDATE (rolled back), so a bulk change was approved and then failed target by target. It is now judged as a
 * PostgreSQL real is (single-float-sets.test.ts, one rule: what the column reads back), at proposal and before
 * anything is sent; a FLOAT UNSIGNED refuses a number below 0 there too.
 */
describe('sql on MariaDB: a number set into a FLOAT column is judged by what it reads back', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table things (id varchar(10) primary key, version int not null, f float, u float unsigned, d double) engine = InnoDB')
    await engine.exec("insert into things (id, version) values ('a', 1)")
    connector = engine.connector('things', { id: 'string', version: 'integer', f: 'number', u: 'number', d: 'number' })
  })
  after(async () => void (await engine?.drop()))

  for (const [field, value] of [['f', 123456.7], ['f', 1234567], ['f', 16777216], ['f', 1e-40], ['u', -1]] as const) {
    it(`${field} = ${value}: refused at proposal and before anything is sent, naming the column`, async () => {
      const message = new RegExp(`sets "${field}" to ${String(value).replace(/[.+-]/g, '\\$&')} where column "${field}" of table things is float( unsigned)?, which keeps only numbers.*single-precision.*at most 6 significant digits`)
      const numbers = await connector.numberColumns!()
      assert.throws(() => assertColumnsFit('tune', [], { [field]: value }, [], numbers), (error: any) => error.code === 'invalid_request' && message.test(error.message))
      await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { [field]: value }, precondition: {} }), (error: any) => {
        assert.equal(error.code, 'invalid_request', error.message)
        assert.match(error.message, message)
        assert.match(error.message, /nothing was written/)
        return true
      })
      assert.deepEqual(await engine.rows("select version from things where id = 'a'"), [{ version: 1 }])
    })
  }

  it('numbers FLOAT reads back as set are written, and a DOUBLE takes 123456.7', async () => {
    const kept = { f: 123456, u: 0.1, d: 123456.7 }
    const written = await connector.write({ id: 'a', expectedVersion: '1', set: kept, precondition: {} })
    assert.equal(written.kind, 'written', JSON.stringify(written))
    assert.deepEqual(written.kind === 'written' && { f: written.record!.fields.f, u: written.record!.fields.u, d: written.record!.fields.d }, kept)
    for (const [n, f] of [3.4e38, 1e-7, -2.5].entries()) {
      const again = await connector.write({ id: 'a', expectedVersion: String(n + 2), set: { f }, precondition: {} })
      assert.equal(again.kind === 'written' && again.record!.fields.f, f, JSON.stringify(again))
    }
  })
})
