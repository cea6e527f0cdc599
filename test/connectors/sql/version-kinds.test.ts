import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { search } from './support/engine.js'
import { thingsTable } from './support/table-of.js'

/**
 * A MariaDB JSON version column (LONGTEXT in its catalogue). The driver used to parse it: every row's version was
 * "[object Object]", a version no write can be conditional on (the UPDATE compares the stored text), shown as if it
 * were one, the walk complete. It is now read as the text stored (`jsonStrings`): each record shows its version as
 * stored.
 */
describe('sql connector on mysql: a JSON version column', () => {
  const { engine } = thingsTable('mysql', [
    'create table things (id varchar(10) primary key, version json not null, name text)',
    `insert into things values ('a', '{"v": 1}', 'n'), ('b', '{"v": 2}', 'n')`,
  ])
  const stringVersion = () => engine().connector('things', { id: 'string', version: 'string', name: 'string' })

  it('each record shows its version as stored, never "[object Object]"', async () => {
    const envelope = await search(stringVersion(), {}, 10)
    assert.deepEqual(envelope.items.map((item) => item.version), ['{"v": 1}', '{"v": 2}'])
  })

  it('a write conditional on "[object Object]" is refused and changes nothing', async () => {
    const outcome = await stringVersion().write({ id: 'a', expectedVersion: '[object Object]', set: { name: 'x' }, precondition: {} })
    assert.notEqual(outcome.kind, 'written', JSON.stringify(outcome))
    assert.deepEqual(await engine().rows(`select name from things where id = 'a'`), [{ name: 'n' }])
  })
})
