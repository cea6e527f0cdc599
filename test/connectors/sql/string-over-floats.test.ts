import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide } from '../../../src/contract/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A `string` field over a floating-point column shows each value as JavaScript spells the number (1e15 as
 * "1000000000000000", 1e-7 as "1e-7"); the server engines compare their own spelling (MariaDB "1e15" and
 * "0.0000001", PostgreSQL "1e+15"). `eq` on the value a record shows found nothing, complete. A filter on it is
 * refused, naming the column and the fix, as a string over a date column is.
 */
const FIELDS = { id: 'string', version: 'integer', d: 'string' }
const COLUMN = { mysql: 'double', postgres: 'double precision', sqlite: 'REAL' } as const

for (const kind of ['mysql', 'postgres', 'sqlite'] as const)
  describe(`sql on ${kind}: a string field over a ${COLUMN[kind]} column`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table floats (id varchar(10) primary key, version integer not null, d ${COLUMN[kind]})`)
      await engine.exec("insert into floats values ('a', 1, 1e15), ('b', 1, 1e-7), ('c', 1, 100)")
    })
    after(() => engine?.drop())

    it('a record shows the number as JavaScript spells it; no filter on it answers as if complete', async () => {
      const connector = engine.connector('floats', FIELDS)
      const all = await search(connector, {}, 10)
      assert.deepEqual(all.items.map((i) => i.fields.d), ['1000000000000000', '1e-7', '100'])
      for (const filter of [{ d: '1000000000000000' }, { d: '1e-7' }, { d: { gt: '2' } }]) {
        const envelope = await search(connector, filter, 10)
        assert.equal(envelope.complete, false, JSON.stringify(envelope.items))
        assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
        assert.match(JSON.stringify(envelope.incomplete_reasons), /field \\?"d\\?" is declared string, but column \\?"d\\?".*declare it one of number(,| or) integer/)
      }
    })
  })
