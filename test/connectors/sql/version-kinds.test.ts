import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { search } from './support/engine.js'
import { thingsTable } from './support/table-of.js'

/**
 * A version column the driver reads as an object (MariaDB's JSON, LONGTEXT in its catalogue, parsed by the driver):
 * every row's version was "[object Object]", a version no write can be conditional on (the UPDATE compares the
 * stored text), shown as if it were one, the walk complete. Such a version names none: the row is counted as having
 * no version and a write to it is refused before anything is sent.
 */
describe('sql connector on mysql: a JSON version column', () => {
  const { engine } = thingsTable('mysql', [
    'create table things (id varchar(10) primary key, version json not null, name text)',
    `insert into things values ('a', '{"v": 1}', 'n'), ('b', '{"v": 2}', 'n')`,
  ])
  const stringVersion = () => engine().connector('things', { id: 'string', version: 'string', name: 'string' })

  it('no record shows "[object Object]" as its version; the walk is not complete', async () => {
    const envelope = await search(stringVersion(), {}, 10)
    assert.ok(envelope.items.every((item) => item.version !== '[object Object]'), JSON.stringify(envelope.items))
    assert.equal(envelope.complete, false)
  })

  it('a write conditional on such a version is refused and changes nothing', async () => {
    const outcome = await stringVersion().write({ id: 'a', expectedVersion: '[object Object]', set: { name: 'x' }, precondition: {} })
    assert.notEqual(outcome.kind, 'written', JSON.stringify(outcome))
    assert.deepEqual(await engine().rows(`select name from things where id = 'a'`), [{ name: 'n' }])
  })
})
