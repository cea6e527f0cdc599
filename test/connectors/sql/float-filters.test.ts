import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { assertCompleteSearch, createEngine, search, type Engine, type Kind } from './support/engine.js'

/**
 * A MySQL/MariaDB FLOAT keeps a single-precision value, which the server sends (and a record shows) as its shortest
 * text, "0.1", while comparing it with a number as a double, 0.100000001…: `v: 0.1` and `lte: 0.1` left out the row
 * a record shows as 0.1, `gt: 0.1` took it in, and 123456789, shown as 123457000, matched no `eq` on the value shown,
 * each answer complete. A filter or precondition on it compares the value as a record shows it.
 */
const FIELDS = { id: 'string', version: 'integer', v: 'number', w: 'integer' }
const ROWS: [string, number | null, number | null][] = [
  ['a', 0.1, 16777217],
  ['b', 1.5, 3],
  ['c', 123456789, 123456789],
  ['d', null, null],
  ['e', -3.4028234663852886e38, 0],
]

const CASES: [Filter, string[]][] = [
  [{ v: 0.1 }, ['a']],
  [{ v: { lte: 0.1 } }, ['a', 'e']],
  [{ v: { gt: 0.1 } }, ['b', 'c']],
  [{ v: { gte: 0.1 } }, ['a', 'b', 'c']],
  [{ v: { lt: 0.1 } }, ['e']],
  [{ v: 123457000 }, ['c']],
  [{ v: { in: [0.1, 1.5] } }, ['a', 'b']],
  [{ v: { not_in: [0.1] } }, ['b', 'c', 'e']],
  [{ v: -3.40282e38 }, ['e']],
  [{ w: 16777200 }, ['a']],
  [{ w: { gte: 123457000 } }, ['c']],
  [{ v: { is_null: true } }, ['d']],
]

/** A table `approx` of `ROWS`-like rows in a `column` column on `kind`: each value shown as `shown`, each filter of `cases` complete. */
function floatFilters(kind: Kind, column: string, rows: readonly [string, number | null, number | null][], shown: unknown[][], cases: readonly [Filter, string[]][]): void {
  describe(`sql on ${kind}: filters on a ${column} column`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table approx (id varchar(10) primary key, version integer not null, v ${column}, w ${column})`)
      for (const [id, v, w] of rows) await engine.exec(`insert into approx values ('${id}', 1, ${v ?? 'null'}, ${w ?? 'null'})`)
    })
    after(() => engine?.drop())

    it('a record shows each value as the server sends it', async () => {
      const envelope = await search(engine.connector('approx', FIELDS), {}, 10)
      assert.deepEqual(envelope.items.map((i) => [i.id, i.fields.v, i.fields.w]), shown)
    })

    for (const [filter, expected] of cases)
      it(`${JSON.stringify(filter)}: ${JSON.stringify(expected)}, complete`, () => assertCompleteSearch(engine.connector('approx', FIELDS), filter, expected))

    it('a precondition on the value a record shows holds, and one it does not meet fails', async () => {
      const connector = engine.connector('approx', FIELDS)
      const held = await connector.write({ id: 'a', expectedVersion: '1', set: { v: 0.5 }, precondition: { v: { lte: 0.1 } } })
      assert.equal(held.kind, 'written', JSON.stringify(held))
      const failed = await connector.write({ id: 'b', expectedVersion: '1', set: { v: 2.5 }, precondition: { v: { gt: 1.5 } } })
      assert.equal(failed.kind === 'conflict' && failed.reason, 'precondition_failed', JSON.stringify(failed))
    })
  })
}

floatFilters('mysql', 'float', ROWS, [['a', 0.1, 16777200], ['b', 1.5, 3], ['c', 123457000, 123457000], ['d', null, null], ['e', -3.40282e38, 0]], CASES)

/**
 * A PostgreSQL `real` likewise: sent as its shortest text ("0.1", "1.2345679e+08"), compared with a number as a
 * double (0.100000001…): `v: 0.1`, `lte: 0.1`, `v: 1e20` left out the row a record shows with that value, each answer
 * complete.
 */
const PG_ROWS: [string, number | null, number | null][] = [
  ['a', 0.1, 16777217],
  ['b', 1.5, 3],
  ['c', 123456789, 123456789],
  ['d', null, null],
  ['e', 1e20, 0],
]
floatFilters('postgres', 'real', PG_ROWS, [['a', 0.1, 16777216], ['b', 1.5, 3], ['c', 123456790, 123456790], ['d', null, null], ['e', 1e20, 0]], [
  [{ v: 0.1 }, ['a']],
  [{ v: { lte: 0.1 } }, ['a']],
  [{ v: { gt: 0.1 } }, ['b', 'c', 'e']],
  [{ v: { lt: 0.1 } }, []],
  [{ v: 123456790 }, ['c']],
  [{ v: 1e20 }, ['e']],
  [{ v: { in: [0.1, 1.5] } }, ['a', 'b']],
  [{ v: { not_in: [0.1] } }, ['b', 'c', 'e']],
  [{ w: 16777216 }, ['a']],
  [{ w: { gte: 123456790 } }, ['c']],
  [{ v: { is_null: true } }, ['d']],
])
