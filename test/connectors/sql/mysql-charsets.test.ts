import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { assertCompleteSearch, createEngine, type Engine } from './support/engine.js'

/**
 * A MySQL/MariaDB column in a character set narrower than the connection's utf8mb4 (latin1, utf8mb3) holds no
 * value outside it: '😀' is in no row of it. MariaDB fails a comparison of such a column with such a value
 * ("Illegal mix of collations"): a filter on it answered SOURCE_UNAVAILABLE, "retry after 2 s", which never helps,
 * a read by such an id failed, a write to it or with a precondition on it said `rolled_back`, as if the connection
 * had been lost. No row holds the value: the filter matches nothing, complete; the id is missing; the precondition
 * fails.
 */
const FIELDS = { id: 'string', version: 'integer', name: 'string', m: 'string' }

describe('sql on mysql: values outside a column\'s character set', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table narrow (id varchar(10) character set latin1 primary key, version integer not null,
      name varchar(10) character set latin1 collate latin1_bin, m varchar(10) character set utf8mb3, key (name), key (m))`)
    // c holds '?', what CONVERT makes of a character latin1 lacks: no value asked for matches it unless it is '?'
    await engine.exec("insert into narrow values ('a', 1, 'é', 'x'), ('b', 1, 'e', 'y'), ('c', 1, '?', '?')")
  })
  after(() => engine?.drop())

  const cases: [Filter, string[]][] = [
    [{ name: '😀' }, []],
    [{ name: { in: ['😀', 'é'] } }, ['a']],
    [{ name: 'é' }, ['a']],
    [{ name: '?' }, ['c']],
    [{ name: { not_in: ['😀', 'e'] } }, ['a', 'c']],
    [{ m: '😀' }, []],
    [{ m: { in: ['😀', 'y'] } }, ['b']],
    [{ id: '😀' }, []],
    [{ id: { in: ['😀', 'b'] } }, ['b']],
  ]
  for (const [filter, expected] of cases)
    it(`${JSON.stringify(filter)}: ${JSON.stringify(expected)}, complete`, () => assertCompleteSearch(engine.connector('narrow', FIELDS), filter, expected))

  it('a read by an id the column cannot hold says missing; the others are read', async () => {
    const read = await engine.connector('narrow', FIELDS).readByIds(['😀', 'a'])
    assert.deepEqual([[...read.records.keys()], read.missing, read.failed], [['a'], ['😀'], []])
  })

  it('a write to such an id is missing, one whose precondition asks such a value fails it; nothing is written', async () => {
    const connector = engine.connector('narrow', FIELDS)
    const missing = await connector.write({ id: '😀', expectedVersion: '1', set: { m: 'z' }, precondition: {} })
    assert.equal(missing.kind === 'conflict' && missing.reason, 'missing', JSON.stringify(missing))
    const unmet = await connector.write({ id: 'a', expectedVersion: '1', set: { m: 'z' }, precondition: { name: '😀' } })
    assert.equal(unmet.kind === 'conflict' && unmet.reason, 'precondition_failed', JSON.stringify(unmet))
    const unstorable = await connector.write({ id: 'a', expectedVersion: '1', set: { m: '😀' }, precondition: {} })
    assert.equal(unstorable.kind, 'rejected', JSON.stringify(unstorable))
    assert.deepEqual(await engine.rows("select m, version from narrow where id = 'a'"), [{ m: 'x', version: 1 }])
    const held = await connector.write({ id: 'a', expectedVersion: '1', set: { m: 'z' }, precondition: { name: 'é' } })
    assert.equal(held.kind, 'written', JSON.stringify(held))
  })
})
