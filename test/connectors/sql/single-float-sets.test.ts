import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A PostgreSQL `real` (float4, or a domain over one) keeps about 6 to 9 significant digits: 16777217 is stored as
 * 16777216 and 1.23456789 as 1.2345679. A write setting such a number was sent and answered "written", its record
 * showing another value than approved. A number is now refused before anything is sent unless the single-precision
 * value PostgreSQL stores reads back as that very number (0.1, 16777216, 3.4e38 still write).
 */
describe('sql on postgres: a number set into a real column is judged by what float4 reads back', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create domain ratio as real')
    await engine.exec('create table things (id varchar(10) primary key, version integer not null, r real, q ratio, d double precision)')
    await engine.exec("insert into things (id, version) values ('a', 1)")
    connector = engine.connector('things', { id: 'string', version: 'integer', r: 'number', q: 'number', d: 'number' })
  })
  after(async () => void (await engine?.drop()))

  for (const [field, value] of [['r', 16777217], ['r', 1.23456789], ['r', 0.1 + 0.2], ['q', 123456789], ['r', 1e39]] as const) {
    it(`${field} = ${value}: refused before anything is sent, naming the column`, async () => {
      await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { [field]: value }, precondition: {} }), (error: any) => {
        assert.equal(error.code, 'invalid_request', error.message)
        assert.match(error.message, new RegExp(`sets "${field}" to ${String(value).replace(/[.+]/g, '\\$&')} where column "${field}" of table things is (real|ratio).*single-precision.*nothing was written`))
        return true
      })
      assert.deepEqual(await engine.rows("select version from things where id = 'a'"), [{ version: 1 }])
    })
  }

  it('numbers float4 reads back as set are written, and a double precision column takes 1.23456789', async () => {
    const kept = { r: 0.1, q: 16777216, d: 1.23456789 }
    const written = await connector.write({ id: 'a', expectedVersion: '1', set: kept, precondition: {} })
    assert.equal(written.kind, 'written', JSON.stringify(written))
    assert.deepEqual(written.kind === 'written' && { r: written.record!.fields.r, q: written.record!.fields.q, d: written.record!.fields.d }, kept)
    const again = await connector.write({ id: 'a', expectedVersion: '2', set: { r: 3.4e38 }, precondition: {} })
    assert.equal(again.kind === 'written' && again.record!.fields.r, 3.4e38)
  })
})
