import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { assertCompleteSearch, createEngine, search, type Engine } from './support/engine.js'

/**
 * MySQL/MariaDB compare a YEAR column with a number by reading the number as a year: 1 to 69 as 2001 to 2069, 70 to
 * 99 as 1970 to 1999. `y: 24` matched the row a record shows as 2024, `y: 99` the one shown as 1999, and `gt: 69`
 * (2069) left out 2024, each answer complete. A filter or precondition compares the year a record shows.
 */
const FIELDS = { id: 'string', version: 'integer', y: 'integer', n: 'number' }

describe('sql on mysql: filters on a YEAR column', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table years (id varchar(10) primary key, version integer not null, y year, n year)')
    await engine.exec("insert into years values ('a', 1, 2024, 2024), ('b', 1, 0, 0), ('c', 1, 1999, 1999), ('d', 1, 2000, 2000), ('e', 1, null, null)")
  })
  after(() => engine?.drop())

  it('a record shows each year as a number', async () => {
    const envelope = await search(engine.connector('years', FIELDS), {}, 10)
    assert.deepEqual(envelope.items.map((i) => i.fields.y), [2024, 0, 1999, 2000, null])
  })

  const cases: [Filter, string[]][] = [
    [{ y: 24 }, []],
    [{ y: 2024 }, ['a']],
    [{ y: 99 }, []],
    [{ y: 0 }, ['b']],
    [{ y: { gt: 69 } }, ['a', 'c', 'd']],
    [{ y: { lt: 70 } }, ['b']],
    [{ y: { in: [24, 0] } }, ['b']],
    [{ y: { not_in: [99, 2000] } }, ['a', 'b', 'c']],
    [{ n: { gte: 1.5 } }, ['a', 'c', 'd']],
    [{ n: 24 }, []],
  ]
  for (const [filter, expected] of cases)
    it(`${JSON.stringify(filter)}: ${JSON.stringify(expected)}, complete`, () => assertCompleteSearch(engine.connector('years', FIELDS), filter, expected))

  it('a precondition asking 24 fails on 2024', async () => {
    const outcome = await engine.connector('years', FIELDS).write({ id: 'a', expectedVersion: '1', set: { n: 2025 }, precondition: { y: 24 } })
    assert.equal(outcome.kind === 'conflict' && outcome.reason, 'precondition_failed', JSON.stringify(outcome))
  })
})
