import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * MariaDB and MySQL without NO_ZERO_DATE / NO_ZERO_IN_DATE (or under a non-strict sql_mode) store dates that name
 * no day: '0000-00-00', '2024-00-10'. The driver made them Dates all the same, counting the zero month and day
 * back: '0000-00-00' was shown as 1899-11-30, a day no row holds, and judged by filters as that instant. (Years
 * below 100 were moved into the 1900s the same way.) Such a value is now shown as stored and, under a timestamp
 * field, named as not judged.
 */
describe('sql connector on MariaDB: zero dates', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varchar(10) primary key, version int not null, d date, at datetime(3), shown date) engine = InnoDB`)
    // the server's strict mode refuses these; an upstream that ran without it holds them
    await engine.exec(`set session sql_mode = ''`)
    await engine.exec(`insert into things values
      ('zero', 1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00'),
      ('month', 1, '2024-00-10', '2024-06-00 10:00:00', '2024-00-10'),
      ('early', 1, '0050-06-01', '0050-06-01 12:00:00.250', '0050-06-01'),
      ('plain', 1, '2024-06-01', '2024-06-01 12:00:00.250', '2024-06-01')`)
    connector = engine.connector('things', { id: 'string', version: 'integer', d: 'timestamp', at: 'timestamp', shown: 'string' })
  })
  after(async () => {
    await engine?.drop()
  })

  it('a walk shows each date as stored, and names the ones that name no day as not judged', async () => {
    const envelope = await search(connector, {}, 2)
    assert.deepEqual(
      envelope.items.map((r) => [r.id, r.fields.d, r.fields.at, r.fields.shown]),
      [
        ['early', '0050-06-01T00:00:00.000Z', '0050-06-01T12:00:00.250Z', '0050-06-01T00:00:00.000Z'],
        ['plain', '2024-06-01T00:00:00.000Z', '2024-06-01T12:00:00.250Z', '2024-06-01T00:00:00.000Z'],
      ],
    )
    assert.equal(envelope.complete, false)
    assert.equal(JSON.stringify(envelope).includes('1899'), false, JSON.stringify(envelope))
  })

  it('a read by id fails the records holding a zero date, naming the field, never showing another day', async () => {
    const result = await connector.readByIds(['zero', 'month', 'plain'])
    assert.deepEqual([...result.records.keys()], ['plain'])
    assert.deepEqual(result.failed.map((f) => f.id).sort(), ['month', 'zero'])
    for (const f of result.failed) assert.match(f.message, /"d" as another type than timestamp/)
  })

  it('a string field over a date column shows the zero date as the table stores it', async () => {
    const string = engine.connector('things', { id: 'string', version: 'integer', shown: 'string' })
    const result = await string.readByIds(['zero', 'month'])
    assert.equal(result.records.get('zero')?.fields.shown, '0000-00-00')
    assert.equal(result.records.get('month')?.fields.shown, '2024-00-10')
  })
})
