import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A write's precondition is judged by the SQL, on the row as it is when written. A MySQL/MariaDB date that names no
 * day ('0000-00-00', '2024-00-10') is no instant the plan could have judged, yet the engine compared it:
 * '0000-00-00' < '2024-01-01' held, and a record whose date had been zeroed since the selection was written as if
 * its precondition held. Such a date now fails every comparison a precondition makes: `precondition_failed`,
 * nothing written.
 */
describe('sql on MariaDB: a precondition on a timestamp field over a date column holding a zero date', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varchar(10) primary key, version int not null, name varchar(20), d date, at datetime(3)) engine = InnoDB`)
    await engine.exec(`set session sql_mode = ''`)
    await engine.exec(`insert into things values
      ('zero', 1, 'n', '0000-00-00', '0000-00-00 00:00:00'),
      ('month', 1, 'n', '2024-00-10', '2024-06-00 10:00:00'),
      ('plain', 1, 'n', '2023-06-01', '2023-06-01 12:00:00')`)
    connector = engine.connector('things', { id: 'string', version: 'integer', name: 'string', d: 'timestamp', at: 'timestamp' })
  })
  after(async () => {
    await engine?.drop()
  })

  for (const precondition of [{ d: { lt: '2024-01-01' } }, { at: { lte: '2024-12-31T00:00:00Z' } }, { d: { not_in: ['2023-06-01'] } }] as Filter[]) {
    it(`${JSON.stringify(precondition)} does not hold on a zero date: nothing is written`, async () => {
      for (const id of ['zero', 'month']) {
        const outcome = await connector.write({ id, expectedVersion: '1', set: { name: 'x' }, precondition })
        assert.deepEqual([outcome.kind, 'reason' in outcome && outcome.reason], ['conflict', 'precondition_failed'], `${id}: ${JSON.stringify(outcome)}`)
      }
      assert.deepEqual(await engine.rows(`select id from things where name = 'x'`), [])
    })
  }

  it('a precondition that holds on a real date still writes', async () => {
    const outcome = await connector.write({ id: 'plain', expectedVersion: '1', set: { name: 'y' }, precondition: { d: { lt: '2024-01-01' }, at: { gte: '2023-06-01T12:00:00Z' } } })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
  })
})
