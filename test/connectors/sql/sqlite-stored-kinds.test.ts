import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A `string` field over a SQLite column that keeps a value as REAL or BLOB where its declared type says nothing of
 * it: NUMERIC affinity keeps 1e20 (past a 64-bit integer) as REAL, and a column with no declared type keeps each
 * value as given. A record shows a REAL as JavaScript spells the number ("100000000000000000000", "100") and bytes
 * as JSON of a Buffer, while SQLite compares the stored REAL or bytes ("100.0", "1.0e+20"): `eq` on the value a
 * record shows answered no record, complete, a false proof of absence, and `not_in` it took the row in. Whatever
 * the column's type, a row keeping a REAL there passes the SQL and is judged on the value a record shows (a BLOB
 * passes too, and is counted as not judged: sqlite-blob-strings.test.ts).
 */
const CASES = [
  { name: 'a NUMERIC column holding 1e20', type: 'numeric', value: '1e20' },
  { name: 'an untyped column holding a REAL', type: '', value: '100.0' },
  { name: 'an untyped column holding a large REAL', type: '', value: '1e15' },
  { name: 'an untyped column holding a BLOB', type: '', value: "x'00ff'" },
] as const

describe('sql on sqlite: a string field over a column keeping a REAL or BLOB value', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
    for (const [i, { type, value }] of CASES.entries()) {
      await engine.exec(`create table t${i} (id text primary key, version integer not null, v ${type})`)
      await engine.exec(`insert into t${i} values ('a', 1, ${value}), ('b', 1, 'b')`)
    }
  })
  after(() => engine?.drop())

  // bytes are shown as PostgreSQL bytea is, and a filter on them is not judged: sqlite-blob-strings.test.ts
  for (const [i, { name }] of CASES.entries())
    if (!name.includes('BLOB'))
      it(`${name}: an eq filter on the value a record shows compares the value a record shows`, async () => {
        const connector = engine.connector(`t${i}`, { id: 'string', version: 'integer', v: 'string' })
        const walk = await search(connector, {}, 10)
        const shown = walk.items.find((item) => item.id === 'a')?.fields.v
        assert.ok(typeof shown === 'string', JSON.stringify(walk))
        const filters: [Filter, string[]][] = [
          [{ v: shown }, ['a']],
          [{ v: { in: [shown] } }, ['a']],
          [{ v: { gte: shown, lte: shown } }, ['a']],
          [{ v: { not_in: [shown] } }, ['b']],
        ]
        for (const [filter, ids] of filters) {
          const envelope = await search(connector, filter, 10)
          assert.deepEqual(envelope.items.map((item) => item.id), ids, `${JSON.stringify(filter)}: ${JSON.stringify(envelope)}`)
          assert.equal(envelope.complete, true)
        }
      })

  for (const [i, { name }] of CASES.entries())
    it(`${name}: a precondition on the value a record shows never holds where the plan said it fails`, async () => {
      const connector = engine.connector(`t${i}`, { id: 'string', version: 'integer', v: 'string' })
      const shown = (await search(connector, {}, 10)).items.find((item) => item.id === 'a')?.fields.v
      assert.ok(typeof shown === 'string')
      // the plan, on the value shown, says `not_in: [shown]` fails: the write must not be made
      // a value a NUMERIC column keeps as written ("x" it would keep as TEXT: refused before the precondition, string-set-values.test.ts)
      const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { v: '5' }, precondition: { v: { not_in: [shown] } } })
      assert.notEqual(outcome.kind, 'written', JSON.stringify(outcome))
      assert.deepEqual(await engine.rows(`select version from t${i} where id = 'a'`), [{ version: 1 }])
    })
})
