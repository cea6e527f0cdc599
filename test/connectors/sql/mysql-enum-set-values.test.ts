import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A MariaDB ENUM or SET column keeps only its members, as the table spells them: "prp" into ENUM('free','pro') is
 * refused by STRICT ("Data truncated"), "PRO" is kept as "pro", and "b,a" into SET('a','b') is kept as "a,b". Such a
 * value was proposed, approved and committed, and only the write said no (rolled back, "Data truncated for column")
 * or kept another value than approved. The catalogue's column type names the members, so a string field over such a
 * column now refuses the value before anything is sent (and a plan before approval: the same `setStringMisfit`),
 * naming the members.
 */
describe('sql connector on MariaDB: a string an ENUM or SET column would not keep as written', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varchar(10) primary key, version int not null, tier enum('free','pro','it''s') not null, flags set('a','b','c') not null) engine = InnoDB`)
    await engine.exec(`insert into things values ('r1', 1, 'free', 'a')`)
    connector = engine.connector('things', { id: 'string', version: 'integer', tier: 'string', flags: 'string' })
  })
  after(async () => {
    await engine?.drop()
  })

  for (const [set, words] of [
    [{ tier: 'prp' }, /sets "tier" to "prp" where .*enum.*one of "free", "pro", "it's".*nothing was written/],
    [{ tier: 'PRO' }, /sets "tier" to "PRO" where .*one of "free", "pro", "it's"/],
    [{ flags: 'b,a' }, /sets "flags" to "b,a" where .*set.*"a", "b", "c".*each at most once, in that order/],
    [{ flags: 'a,z' }, /sets "flags" to "a,z"/],
  ] as const) {
    it(`${JSON.stringify(set)}: refused before anything is sent, naming the members`, async () => {
      await assert.rejects(connector.write({ id: 'r1', expectedVersion: '1', set, precondition: {} }), words)
      assert.deepEqual(await engine.rows(`select version, tier, flags from things where id = 'r1'`), [{ version: 1, tier: 'free', flags: 'a' }])
    })
  }

  it('members as the table spells them are written (a SET in its order, an empty SET)', async () => {
    const outcome = await connector.write({ id: 'r1', expectedVersion: '1', set: { tier: "it's", flags: 'a,c' }, precondition: {} })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    const again = await connector.write({ id: 'r1', expectedVersion: '2', set: { tier: 'pro', flags: '' }, precondition: {} })
    assert.equal(again.kind, 'written', JSON.stringify(again))
    assert.deepEqual(await engine.rows(`select version, tier, flags from things where id = 'r1'`), [{ version: 3, tier: 'pro', flags: '' }])
  })
})
