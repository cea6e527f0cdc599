import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { assertColumnsFit } from '../../../src/plans/set-types.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A PostgreSQL money column is in the numeric category, so a field declared number over it fitted: a write setting
 * 12.345 was sent, kept as 12.35 (money rounds to lc_monetary's digits) and answered "written" with the record showing
 * "$12.35", another value than approved; a filter on it failed at the database ("operator does not exist: money >
 * numeric"). A number or integer field over money is now a misfit: a set value is refused at proposal and before
 * anything is sent, a filter is refused naming why, and the fix says to declare it string (shown as the server's text).
 */
describe('sql on postgres: a money column', () => {
  let engine: Engine
  let numbers: SqlConnector
  let strings: SqlConnector
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create domain price as money')
    await engine.exec('create table things (id varchar(10) primary key, version integer not null, m money, p price)')
    await engine.exec("insert into things values ('a', 1, 12.34, 1), ('b', 1, 1000.5, 2)")
    numbers = engine.connector('things', { id: 'string', version: 'integer', m: 'number', p: 'integer' })
    strings = engine.connector('things', { id: 'string', version: 'integer', m: 'string', p: 'string' })
  })
  after(async () => void (await engine?.drop()))

  for (const [field, value] of [['m', 12.345], ['p', 12]] as const) {
    it(`${value} set into "${field}" is refused at proposal and before anything is sent, nothing written`, async () => {
      const misfits = await numbers.fieldTypeMisfits!()
      assert.throws(() => assertColumnsFit('reprice', misfits, { [field]: value }), (error: any) => {
        assert.equal(error.code, 'invalid_request')
        assert.match(error.message, new RegExp(`action "reprice" sets "${field}" to a number where .*column "${field}" of table things is (money|price): .*12\\.345 is kept as 12\\.35.*declare it string`))
        return true
      })
      await assert.rejects(numbers.write({ id: 'a', expectedVersion: '1', set: { [field]: value }, precondition: {} }), /nothing was written/)
      assert.deepEqual(await engine.rows("select version, m::numeric::text as m from things where id = 'a'"), [{ version: 1, m: '12.34' }])
    })
  }

  it('a filter on the number field is refused naming money, not failed at the database', async () => {
    const envelope = await search(numbers, { m: { gt: 100 } }, 5)
    assert.equal(envelope.complete, false)
    assert.match(JSON.stringify(envelope.incomplete_reasons), /column \\"m\\" of table things is money: .*lc_monetary/)
  })

  it('declared string, values read as the server spells them, and equality with a shown value finds its row', async () => {
    const envelope = await search(strings, {}, 5)
    assert.deepEqual(envelope.items.map((i) => i.fields.m), ['$12.34', '$1,000.50'])
    const found = await search(strings, { m: '$1,000.50' }, 5)
    assert.deepEqual(found.items.map((i) => i.id), ['b'])
  })
})
