import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { createEngine, type Engine } from './support/engine.js'

/**
 * The connector's SQLite connection prepares each statement text once: a window's UPDATE (64 id-and-version
 * pairs) took ~0.4 ms to prepare, anew for every window of every operation. A statement kept across a schema
 * change prepares itself again (SQLite's v2 statements), so a trigger added later is still seen.
 */
describe('sql on sqlite: statements prepared once per connection', () => {
  let engine: Engine
  const prepared: string[] = []
  const original = BetterSqlite3.prototype.prepare
  before(async () => {
    engine = await createEngine('sqlite')
    await engine.exec('create table things (id text primary key, status text, version integer not null)')
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await engine.exec(`insert into things values ('${id}', 'active', 1)`)
    BetterSqlite3.prototype.prepare = function (this: BetterSqlite3.Database, text: string) {
      prepared.push(text)
      return original.call(this, text)
    } as typeof original
  })
  after(async () => {
    BetterSqlite3.prototype.prepare = original
    await engine?.drop()
  })

  it('two windows of the same shape share one prepared UPDATE and one prepared read', async () => {
    const connector = engine.connector('things', { id: 'string', status: 'string', version: 'integer' })
    try {
      const window = (ids: string[]) => connector.writeWindow!(ids.map((id) => ({ id, expectedVersion: '1', set: { status: 'paused' }, precondition: {} })))
      await connector.readByIds(['a', 'b'])
      const first = await window(['a', 'b'])
      prepared.length = 0
      await connector.readByIds(['c', 'd'])
      const second = await window(['c', 'd'])
      assert.deepEqual([...first, ...second].map((o) => o.kind), ['written', 'written', 'written', 'written'])
      assert.deepEqual(prepared.filter((text) => /^\s*(update|select)/i.test(text) && /"things"/.test(text)), [], 'the second window prepared nothing of its own')
      await engine.exec(`create trigger keep_active after update of status on things begin update things set status = 'active' where id = new.id; end`)
      await connector.refreshFacts!()
      const [third] = await window(['e'])
      // seen: the row read back before COMMIT holds "active", so the write is refused and rolled back (unseen, the
      // autocommitted RETURNING would have answered "paused", written)
      assert.equal(third!.kind, 'rejected', JSON.stringify(third))
      assert.match(third!.kind === 'rejected' ? third!.message : '', /column "status" of record "e" would hold "active" where "paused" was asked/, 'the trigger added since is seen')
    } finally {
      await connector.close()
    }
  })
})
