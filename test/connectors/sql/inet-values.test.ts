import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { search } from './support/engine.js'
import { thingsTable } from './support/table-of.js'

/**
 * A PostgreSQL inet value is output without its mask where it names one host ('10.0.0.1'), but `cast(… as text)`,
 * by which a string filter and a write's exact-id check compare it, keeps the mask ('10.0.0.1/32'): a walk showed
 * the id "10.0.0.1", the filter `{id: {eq: "10.0.0.1"}}` answered no record, complete, and a write to "10.0.0.1"
 * was a conflict "no longer meets the action's precondition", with none given. Read as its text cast, with its
 * mask, the id a record shows is the one its filters and writes compare.
 */
describe('sql connector on postgres: an inet id column', () => {
  const { engine, connector } = thingsTable('postgres', [`create table things (id inet primary key, version int not null, name text)`, `insert into things values ('10.0.0.1', 1, 'n'), ('10.0.0.1/8', 1, 'n'), ('::1', 1, 'n')`])

  it('every id a walk shows is found by a filter on it, complete', async () => {
    const walked = (await search(connector(), {}, 10)).items.map((item) => (item as { id: string }).id)
    assert.equal(walked.length, 3)
    for (const id of walked) {
      const found = await search(connector(), { id: { eq: id } }, 10)
      assert.deepEqual([found.items.map((item) => (item as { id: string }).id), found.complete], [[id], true])
    }
  })

  it('a write to each id a walk shows is written to that row', async () => {
    const walked = (await search(connector(), {}, 10)).items.map((item) => (item as { id: string }).id)
    for (const id of walked) {
      const outcome = await connector().write({ id, expectedVersion: '1', set: { name: 'x' }, precondition: {} })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    }
    assert.deepEqual(await engine().rows(`select distinct version, name from things`), [{ version: 2, name: 'x' }])
  })
})
