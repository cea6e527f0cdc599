import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A `number` or `integer` field over a SQLite column that keeps a value of another type (a NUMERIC column keeps
 * 'abc' as text, a column of no declared type keeps '500' as text, a BLOB as bytes, a REAL 1.5 under an integer).
 * A page read counts such a row as not judged (sqlite-loose-values); a write's precondition was the SQL's last
 * word: SQLite orders text and bytes above every number, so `gt: 6` held on 'abc' and the write was made on a
 * record no plan could judge. A precondition on such a field now never holds on a value of another type.
 */
const ROWS: [string, string][] = [
  ['text', `'abc'`],
  ['numeral text', `'500'`],
  ['blob', `x'00ff'`],
]

describe('sql on sqlite: a precondition on a number field over a value of another type', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
    await engine.exec('create table t (id text primary key, version integer not null, v, note text)')
    for (const [i, [, value]] of ROWS.entries()) await engine.exec(`insert into t values ('r${i}', 1, ${value}, 'n')`)
    await engine.exec(`insert into t values ('f', 1, 1.5, 'n'), ('ok', 1, 7, 'n')`)
  })
  after(() => engine?.drop())

  const preconditions: Filter[] = [{ v: { gt: 6 } }, { v: { gte: 0 } }, { v: { not_in: [5] } }, { v: { lt: 1000 } }]
  for (const type of ['number', 'integer'] as const)
    for (const [i, [name]] of ROWS.entries())
      it(`${type} over ${name}: no precondition holds, nothing is written`, async () => {
        const connector = engine.connector('t', { id: 'string', version: 'integer', v: type, note: 'string' })
        for (const precondition of preconditions) {
          const outcome = await connector.write({ id: `r${i}`, expectedVersion: '1', set: { note: 'x' }, precondition })
          assert.notEqual(outcome.kind, 'written', `${JSON.stringify(precondition)}: ${JSON.stringify(outcome)}`)
        }
        assert.deepEqual(await engine.rows(`select version, note from t where id = 'r${i}'`), [{ version: 1, note: 'n' }])
      })

  it('integer over a REAL with a fraction: no precondition holds; a number field over it still writes', async () => {
    const integer = engine.connector('t', { id: 'string', version: 'integer', v: 'integer', note: 'string' })
    const refused = await integer.write({ id: 'f', expectedVersion: '1', set: { note: 'x' }, precondition: { v: { gt: 1 } } })
    assert.notEqual(refused.kind, 'written', JSON.stringify(refused))
    const number = engine.connector('t', { id: 'string', version: 'integer', v: 'number', note: 'string' })
    const written = await number.write({ id: 'f', expectedVersion: '1', set: { note: 'x' }, precondition: { v: { gt: 1 } } })
    assert.equal(written.kind, 'written', JSON.stringify(written))
  })

  it('a number stored as a number: the precondition holds as before', async () => {
    const connector = engine.connector('t', { id: 'string', version: 'integer', v: 'number', note: 'string' })
    const outcome = await connector.write({ id: 'ok', expectedVersion: '1', set: { note: 'x' }, precondition: { v: { gt: 6, not_in: [5] } } })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    // and a page read of the text still says not complete
    const walk = await search(connector, { v: { not_in: [5] } }, 10)
    assert.equal(walk.complete, false)
  })
})
