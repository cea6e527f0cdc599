import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * MySQL/MariaDB order an ENUM (or SET) column by its members' positions in the list ('b', 'a', '10', '2'), but
 * compare it with a string as text: a walk paged `ORDER BY id … WHERE id > last` took 'b' first, then asked for ids
 * above 'b' as text, found none, and said complete with one row of four. The walk orders and resumes by the text.
 */
const FIELDS = { id: 'string', version: 'integer', name: 'string' }

describe('sql on mysql: an ENUM or SET id column', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec("create table picked (id enum('b', 'a', '10', '2', 'é') character set latin1 primary key, version integer not null, name text)")
    await engine.exec("insert into picked values ('a', 1, 'x'), ('b', 1, 'x'), ('10', 1, 'x'), ('2', 1, 'x'), ('é', 1, 'x')")
    await engine.exec("create table sets (id set('y', 'x', 'z') primary key, version integer not null, name text)")
    await engine.exec("insert into sets values ('x', 1, 'x'), ('y', 1, 'x'), ('x,y', 1, 'x'), ('z', 1, 'x')")
  })
  after(() => engine?.drop())

  for (const pageSize of [1, 2, 100])
    it(`an ENUM id: a walk in pages of ${pageSize} returns every row once, complete`, async () => {
      const envelope = await search(engine.connector('picked', FIELDS), {}, pageSize)
      assert.deepEqual(envelope.items.map((i) => i.id).sort(), ['10', '2', 'a', 'b', 'é'], JSON.stringify(envelope.incomplete_reasons))
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    })

  for (const pageSize of [1, 3])
    it(`a SET id: a walk in pages of ${pageSize} returns every row once, complete`, async () => {
      const envelope = await search(engine.connector('sets', FIELDS), {}, pageSize)
      assert.deepEqual(envelope.items.map((i) => i.id).sort(), ['x', 'y', 'y,x', 'z'], JSON.stringify(envelope.incomplete_reasons))
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    })

  it('an ENUM id: a filter, a read by id and a write find their rows', async () => {
    const connector = engine.connector('picked', FIELDS)
    const envelope = await search(connector, { id: { gt: '2' } }, 1)
    assert.deepEqual(envelope.items.map((i) => i.id), ['a', 'b', 'é'])
    assert.equal(envelope.complete, true)
    const read = await connector.readByIds(['a', 'é', 'c'])
    assert.deepEqual([[...read.records.keys()].sort(), read.missing], [['a', 'é'], ['c']])
    const outcome = await connector.write({ id: 'é', expectedVersion: '1', set: { name: 'y' }, precondition: {} })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
  })
})
