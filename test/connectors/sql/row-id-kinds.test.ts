import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { search } from './support/engine.js'
import { idRefusedTests } from './support/refused-ids.js'
import { thingsTable } from './support/table-of.js'

/**
 * A MariaDB JSON id column is LONGTEXT in its catalogue and compares its stored text. mysql2 used to parse its
 * values into objects (every row "[object Object]", refused at run time below); it now reads them as the text
 * stored (`jsonStrings`), so they are text ids: a walk shows each as stored, and a read or write by it finds its row.
 */
describe('sql connector on mysql: a JSON id column (LONGTEXT in the catalogue, read as its stored text)', () => {
  const { engine, connector } = thingsTable('mysql', [`create table things (id json, version int not null, name text, unique key (id))`, `insert into things values ('{"a":  1}', 1, 'n'), ('{"b":2}', 1, 'n'), ('7', 1, 'n')`])

  it('a walk shows every id as stored, complete, at any page size', async () => {
    for (const pageSize of [1, 2, 10]) {
      const envelope = await search(connector(), {}, pageSize)
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      assert.deepEqual(envelope.items.map((item) => (item as { id?: unknown }).id).sort(), ['7', '{"a":  1}', '{"b":2}'])
    }
  })

  it('a read by the stored text finds its row; a re-spelled text is missing', async () => {
    const read = await connector().readByIds(['{"a":  1}', '{"a":1}', '7'])
    assert.deepEqual([...read.records.keys()].sort(), ['7', '{"a":  1}'])
    assert.deepEqual(read.missing, ['{"a":1}'])
    assert.deepEqual(read.failed, [])
  })

  it('a write by the stored text writes that row only', async () => {
    const outcome = await connector().write({ id: '{"a":  1}', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    assert.deepEqual(await engine().rows(`select concat('', id) as id, name from things order by id`), [
      { id: '7', name: 'n' },
      { id: '{"a":  1}', name: 'x' },
      { id: '{"b":2}', name: 'n' },
    ])
  })
})

/** A geometry id (POINT, as MariaDB's catalogue names it) is refused by its type name, before anything is read. */
describe('sql connector on mysql: a POINT id column', () => {
  const { engine, connector } = thingsTable('mysql', [`create table things (id point primary key, version int not null, name text)`, `insert into things values (ST_GeomFromText('POINT(1 1)'), 1, 'n'), (ST_GeomFromText('POINT(2 2)'), 1, 'n')`])

  idRefusedTests(connector, /id column "id" of table things is point, which the driver reads as an object.*choose another id column/, { read: ['[object Object]', 'POINT(1 1)'], write: '[object Object]' }, async () => {
    assert.deepEqual(await engine().rows(`select distinct version, name from things`), [{ version: 1, name: 'n' }])
  })
})

/**
 * A PostgreSQL money id is read as the server's lc_monetary text ("$1.50"), which no read, write or walk position
 * can give back as money (a money column takes no text of that form from a parameter of another type, and the form
 * changes with the session's lc_monetary): a walk answered "$1.50" complete, and every read by it failed. Refused
 * by its type name, as an object id is.
 */
describe('sql connector on postgres: a money id column', () => {
  const { engine, connector } = thingsTable('postgres', [`create table things (id money primary key, version int not null, name text)`, `insert into things values (1.5, 1, 'n'), (2, 1, 'n')`])

  idRefusedTests(connector, /id column "id" of table things is money, which is read as text in the server's lc_monetary format.*choose another id column/, { read: ['$1.50', '1.5'], write: '$1.50' }, async () => {
    assert.deepEqual(await engine().rows(`select distinct version, name from things`), [{ version: 1, name: 'n' }])
  })
})
