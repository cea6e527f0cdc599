import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { search } from './support/engine.js'
import { idRefusedTests } from './support/refused-ids.js'
import { thingsTable } from './support/table-of.js'

/**
 * An id value the driver gives as an object, whatever the column's type name says: a MariaDB JSON column is
 * LONGTEXT in its catalogue (no refusal by type name), and its values arrive parsed, as objects. Under a unique key
 * the walk checked nothing and answered every row under the id "[object Object]", complete. Each row's id is now
 * checked by its runtime kind: the page is refused, naming the column, the row and the kind.
 */
describe('sql connector on mysql: a JSON id column (LONGTEXT in the catalogue, read as objects)', () => {
  const { engine, connector } = thingsTable('mysql', [`create table things (id json, version int not null, name text, unique key (id))`, `insert into things values ('{"a":1}', 1, 'n'), ('{"b":2}', 1, 'n'), ('7', 1, 'n')`])

  it('a walk is refused at the first row whose id is an object, naming the column, the row and the kind, never complete', async () => {
    for (const pageSize of [1, 2, 10]) {
      const envelope = await search(connector(), {}, pageSize)
      assert.equal(envelope.complete, false)
      assert.ok(!envelope.items.some((item) => (item as { id?: unknown }).id === '[object Object]'), JSON.stringify(envelope.items))
      assert.match(envelope.incomplete_reasons.map((r) => r.message).join(' | '), /id column "id" of table things holds a value the driver gives as an object, not as text or a number \(row \d+ of /)
    }
  })

  it('a read by an id whose row holds an object fails it, naming the kind, never missing', async () => {
    const read = await connector().readByIds(['{"a":1}', '7'])
    assert.deepEqual(read.missing, [])
    assert.deepEqual([...read.records.keys()], ['7'])
    assert.equal(read.failed.length, 1)
    assert.match(read.failed[0]!.message, /id column "id" of table things holds a value the driver gives as an object, not as text or a number \(row 1 of /)
  })

  it('a write whose UPDATE matches a row holding an object is refused, naming the kind, and changes nothing', async () => {
    const outcome = await connector().write({ id: '{"a":1}', expectedVersion: '1', set: { name: 'x' }, precondition: {} })
    assert.notEqual(outcome.kind, 'written')
    assert.match(JSON.stringify(outcome), /holds a value the driver gives as an object/)
    assert.deepEqual(await engine().rows(`select distinct version, name from things`), [{ version: 1, name: 'n' }])
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
