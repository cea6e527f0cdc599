import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A `string` field over a SQLite column keeping a BLOB (a column of no type, or declared BLOB; any column takes
 * x'78'). A record shows bytes as the PostgreSQL bytea and MariaDB BLOB columns show them, JSON of what the driver
 * built (`{"type":"Buffer","data":[120]}`), and there a filter on such a column is refused as a misfit: SQL
 * compares bytes, not that text. On SQLite a filter matched or dropped the row on that JSON text, complete: `b = "x"`
 * said no record holds "x" while one holds its bytes. A row whose value under a filtered string field is bytes is
 * now counted and named as not judged (`SHAPE_MISMATCH`, the answer not complete), as a misfit's answer is.
 */
describe('sql on sqlite: a string field over a BLOB value', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
    await engine.exec('create table t (id text primary key, version integer not null, b, d blob)')
    await engine.exec(`insert into t values ('a', 1, x'78', x'00ff'), ('b', 1, 'x', 'y'), ('c', 1, 'z', 'z')`)
  })
  after(() => engine?.drop())

  it('a walk with no filter on it shows bytes as PostgreSQL bytea and MariaDB BLOB are shown, and is complete', async () => {
    const connector = engine.connector('t', { id: 'string', version: 'integer', b: 'string', d: 'string' })
    const walk = await search(connector, {}, 10)
    assert.deepEqual(walk.items.map((r) => [r.id, r.fields.b, r.fields.d]), [
      ['a', '{"type":"Buffer","data":[120]}', '{"type":"Buffer","data":[0,255]}'],
      ['b', 'x', 'y'],
      ['c', 'z', 'z'],
    ])
    assert.equal(walk.complete, true)
  })

  const cases: [Filter, string[]][] = [
    [{ b: 'x' }, ['b']],
    [{ b: { not_in: ['x'] } }, ['c']],
    [{ b: '{"type":"Buffer","data":[120]}' }, []],
    [{ b: { gte: '{' } }, []],
    [{ d: { in: ['y', 'z'] } }, ['b', 'c']],
  ]
  for (const [filter, ids] of cases)
    it(`${JSON.stringify(filter)}: the bytes row is named as not judged, never complete`, async () => {
      const connector = engine.connector('t', { id: 'string', version: 'integer', b: 'string', d: 'string' })
      const envelope = await search(connector, filter, 2)
      assert.deepEqual(envelope.items.map((r) => r.id), ids)
      assert.equal(envelope.complete, false, JSON.stringify(envelope))
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
      assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
      assert.equal((reason as { record_count?: number }).record_count, 1)
      assert.match(reason.message, new RegExp(`carried field\\(s\\) ${Object.keys(filter)[0]} with another type than declared`))
    })

  it('a filter on another field shows the bytes row as a walk does, complete', async () => {
    const connector = engine.connector('t', { id: 'string', version: 'integer', b: 'string', d: 'string' })
    const envelope = await search(connector, { id: 'a' }, 2)
    assert.deepEqual([envelope.items.map((r) => r.fields.b), envelope.complete], [['{"type":"Buffer","data":[120]}'], true])
  })
})
