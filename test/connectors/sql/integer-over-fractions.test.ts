import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide, type Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'

/**
 * A field declared `integer` over a column that holds fractions (a SQLite column of INTEGER affinity keeps 1.5 as
 * a REAL, a PostgreSQL numeric, a MySQL DECIMAL or DOUBLE) was judged as if 1.5 were an integer: shown, matched
 * by `gte: 1`, left out by `eq: 2` with the walk complete, where the http connector calls such a value
 * mistyped. Such records are now counted and named as not judged (SHAPE_MISMATCH) whatever the filter, as
 * every other value of another type is, and a read by id fails them.
 */
const COLUMNS: Readonly<Record<Kind, readonly string[]>> = {
  sqlite: ['integer', 'real'],
  postgres: ['numeric(10, 2)', 'double precision'],
  mysql: ['decimal(10, 2)', 'double'],
}
const ID = { sqlite: 'text', postgres: 'text collate "C"', mysql: 'varchar(10) collate utf8mb4_bin' } as const

// a: 1, b: 1.5, c: 2, d: -0.5, e: NULL
const CASES: readonly [Filter, string[], number][] = [
  [{}, ['a', 'c', 'e'], 2],
  [{ n: { gte: 1 } }, ['a', 'c'], 2],
  [{ n: { lt: 1 } }, [], 2],
  [{ n: 2 }, ['c'], 2],
  [{ n: { in: [1, 2] } }, ['a', 'c'], 2],
  [{ n: { not_in: [1] } }, ['c'], 2],
  [{ n: { is_null: true } }, ['e'], 0],
]

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  for (const column of COLUMNS[kind]) {
    describe(`sql on ${kind}: an integer field over a ${column} column holding fractions`, () => {
      let engine: Engine
      let connector: SqlConnector
      before(async () => {
        engine = await createEngine(kind)
        await engine.exec(`create table things (id ${ID[kind]} primary key, version integer not null, n ${column})`)
        await engine.exec(`insert into things (id, version, n) values ('a', 1, 1), ('b', 1, 1.5), ('c', 1, 2), ('d', 1, -0.5), ('e', 1, null)`)
        connector = engine.connector('things', { id: 'string', version: 'integer', n: 'integer' })
      })
      after(async () => {
        await engine?.drop()
      })

      for (const [filter, matching, unjudged] of CASES) {
        it(`${JSON.stringify(filter)}: ${JSON.stringify(matching)}, ${unjudged} named as not judged`, async () => {
          const envelope = await search(connector, filter, 2)
          assert.deepEqual(envelope.items.map((r) => r.id), matching)
          assert.ok(envelope.items.every((r) => r.fields.n === null || Number.isInteger(r.fields.n)), JSON.stringify(envelope.items))
          if (unjudged === 0) {
            assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
            return
          }
          assert.equal(envelope.complete, false)
          assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
          const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
          assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
          assert.equal((reason as { record_count?: number }).record_count, unjudged)
          assert.deepEqual((reason as { fields?: string[] }).fields, ['n'])
        })
      }

      it('a read by id fails the fractions, naming the field, and reads the rest', async () => {
        const read = await connector.readByIds(['a', 'b', 'd'])
        assert.deepEqual([...read.records.keys()], ['a'])
        assert.deepEqual(read.failed.map((f) => f.id).sort(), ['b', 'd'])
        for (const f of read.failed) assert.match(f.message, /holds "n" as another type than integer; it cannot be judged/)
      })
    })
  }
}
