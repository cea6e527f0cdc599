import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { assertCompleteSearch, createEngine, type Engine } from './support/engine.js'

/**
 * JavaScript spells a number at or past 1e21, or below 1e-6, with an exponent ("1e+21", "1e-7"), and MySQL/MariaDB
 * read such a literal as a double: a DECIMAL compared with it was compared as a double too, so `d: 1e21` matched the
 * row a record shows as "1000000000000000000001" and `e: 1e-7` the one shown as "0.0000001000000000000000000001",
 * each answer complete. A number is compared as the decimal it names (a DOUBLE column still compares as doubles).
 */
const FIELDS = { id: 'string', version: 'integer', d: 'number', e: 'number', f: 'number' }

describe('sql on mysql: numbers spelled with an exponent against DECIMAL and DOUBLE columns', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table wide (id varchar(10) primary key, version integer not null, d decimal(30,0), e decimal(30,28), f double)')
    await engine.exec(`insert into wide values ('a', 1, 1000000000000000000001, 0.0000001000000000000000000001, 1e21),
      ('b', 1, 1000000000000000000000, 0.0000001, 1e-7), ('c', 1, -1000000000000000000000, -0.0000001, -1e300)`)
  })
  after(() => engine?.drop())

  const cases: [Filter, string[]][] = [
    [{ d: 1e21 }, ['b']],
    [{ d: { gt: 1e21 } }, ['a']],
    [{ d: { gte: 1e21 } }, ['a', 'b']],
    [{ d: { in: [1e21, -1e21] } }, ['b', 'c']],
    [{ d: { not_in: [1e21] } }, ['a', 'c']],
    [{ d: { lt: 1e70 } }, ['a', 'b', 'c']],
    [{ e: 1e-7 }, ['b']],
    [{ e: { lte: 1e-7 } }, ['b', 'c']],
    [{ e: { gt: 1.5e-35 } }, ['a', 'b']],
    [{ f: 1e21 }, ['a']],
    [{ f: 1e-7 }, ['b']],
    [{ f: { lt: -1e299 } }, ['c']],
  ]
  for (const [filter, expected] of cases)
    it(`${JSON.stringify(filter)}: ${JSON.stringify(expected)}, complete`, () => assertCompleteSearch(engine.connector('wide', FIELDS), filter, expected))

  it('a precondition asking 1e21 fails on the row holding 10^21 + 1, holds on 10^21', async () => {
    const connector = engine.connector('wide', FIELDS)
    const unmet = await connector.write({ id: 'a', expectedVersion: '1', set: { f: 1 }, precondition: { d: 1e21 } })
    assert.equal(unmet.kind === 'conflict' && unmet.reason, 'precondition_failed', JSON.stringify(unmet))
    const held = await connector.write({ id: 'b', expectedVersion: '1', set: { f: 1 }, precondition: { d: 1e21 } })
    assert.equal(held.kind, 'written', JSON.stringify(held))
  })
})
