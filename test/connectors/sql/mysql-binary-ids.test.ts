import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A MySQL/MariaDB id column of bytes (VARBINARY, BINARY(16) uuids, a BLOB) is read as a Buffer: its id was the bytes
 * decoded as UTF-8, so 0xFF00 and 0xFE00 both became "\uFFFD\0" (one key for two rows), a read or write by that
 * key answered "no such record", and a walk's position held the Buffer, which the next page refused as a cursor
 * it had not issued (a walk of pages of one row failed at once, "retry"). Such a column is refused as an id,
 * reads and writes alike, naming the column and the fix.
 */
describe('sql connector on MariaDB: an id column of bytes', () => {
  let engine: Engine
  let connector: SqlConnector
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(`create table things (id varbinary(16) primary key, version int not null, name varchar(10)) engine = InnoDB`)
    await engine.exec(`insert into things values ('a', 1, 'n'), ('b', 1, 'n'), (unhex('FF00'), 1, 'n'), (unhex('FE00'), 1, 'n')`)
    connector = engine.connector('things', { id: 'string', version: 'integer', name: 'string' })
  })
  after(async () => {
    await engine?.drop()
  })

  const REFUSAL = /id column "id" of table things is varbinary.*choose another id column/

  it('a walk is refused, naming the column and the fix, whatever its page size', async () => {
    for (const pageSize of [1, 10]) {
      const envelope = await search(connector, {}, pageSize)
      assert.deepEqual(envelope.items, [])
      assert.equal(envelope.complete, false)
      assert.match(envelope.incomplete_reasons.map((r) => r.message).join(' | '), REFUSAL)
    }
  })

  it('a read by id fails every id, none called missing', async () => {
    const read = await connector.readByIds(['a', '\uFFFD\u0000'])
    assert.deepEqual([read.records.size, read.missing], [0, []])
    assert.equal(read.failed.length, 2)
    for (const f of read.failed) assert.match(f.message, REFUSAL)
  })

  it('a write is refused before anything is sent', async () => {
    await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { name: 'x' }, precondition: {} }), REFUSAL)
    assert.deepEqual(await engine.rows(`select version, name from things where id = 'a'`), [{ version: 1, name: 'n' }])
  })
})
