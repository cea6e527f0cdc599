import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WarrantError } from '../../../src/contract/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

// A MariaDB/MySQL table on an engine without transactions (MyISAM, Aria, MEMORY): ROLLBACK undoes nothing and
// START TRANSACTION WITH CONSISTENT SNAPSHOT pins nothing. A write refused after its UPDATE was still written,
// so "rolled back, nothing was written" would be false: no write is sent at all, saying why and the fix. A walk
// reads the table as it is at each page: never called a consistent snapshot.
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const INNODB_FIX = /table (dup|coarse|things) is a (MyISAM|Aria|MEMORY) table, which keeps no transactions.*no write is sent to it\. Convert the table to InnoDB/

describe('sql: a table without transactions (mysql)', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table dup (id varchar(20), status varchar(20), version integer not null) engine=MyISAM')
    await engine.exec("insert into dup values ('a', 'active', 1), ('a', 'active', 1)")
    await engine.exec('create table coarse (id varchar(20) primary key, status varchar(20), version datetime not null) engine=Aria')
    await engine.exec("insert into coarse values ('a', 'active', '2024-06-01 12:00:00')")
    await engine.exec('create table things (id varchar(20) primary key, status varchar(20), version integer not null) engine=MyISAM')
    await engine.exec("insert into things values ('a', 'active', 1), ('b', 'active', 1), ('c', 'active', 1)")
    await engine.exec('create table memory_things (id varchar(20) primary key, status varchar(20), version integer not null) engine=MEMORY')
  })
  after(() => engine?.drop())

  it('an id of two rows: the write is refused before it is sent, and both rows are as they were', async () => {
    const write = engine.connector('dup', FIELDS).write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })
    await assert.rejects(write, (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && INNODB_FIX.test(error.message))
    assert.deepEqual(await engine.rows("select status, version from dup where status = 'cancelled' or version <> 1"), [])
  })

  it('a version column that cannot move (Aria): refused before it is sent, the row as it was', async () => {
    const connector = engine.connector('coarse', { id: 'string', status: 'string', version: 'timestamp' }, {}, { now: () => new Date('2024-06-01T12:00:00.200Z') })
    const write = connector.write({ id: 'a', expectedVersion: '2024-06-01T12:00:00.000Z', set: { status: 'cancelled' }, precondition: {} })
    await assert.rejects(write, (error: unknown) => error instanceof WarrantError && INNODB_FIX.test(error.message))
    assert.deepEqual(await engine.rows("select status from coarse where id = 'a'"), [{ status: 'active' }])
  })

  it('a read session is not a consistent snapshot: a walk whose pages read moving data says so', async () => {
    const connector = engine.connector('things', FIELDS)
    const session = await connector.openSession()
    assert.equal(session.consistentSnapshot, false)
    const first = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 1 })
    assert.equal(first.kind, 'page')
    await engine.exec("update things set status = 'cancelled', version = version + 1 where id in ('a', 'c')")
    let position = first.kind === 'page' ? first.next : null
    const seen = first.kind === 'page' ? [...first.items] : []
    while (position !== null) {
      const page = await session.readPage({ source: 'things-db', filter: {}, position, pageSize: 1 })
      assert.equal(page.kind, 'page')
      if (page.kind !== 'page') break
      seen.push(...page.items)
      position = page.next
    }
    await session.close()
    // a state the table never had at any one moment: read as it was at each page, and not called a snapshot
    assert.deepEqual(seen.map((r) => `${r.id}:${r.fields.status}`), ['a:active', 'b:active', 'c:cancelled'])
    const envelope = await search(connector, {}, 1)
    assert.equal(envelope.scope.consistent_snapshot, false)
    // keyset positions on a unique key still prove every row that stayed was read
    assert.equal(envelope.complete, true)
    assert.equal(envelope.scope.stability, 'proven')
  })

  it('an InnoDB table is unchanged: written, and read under a consistent snapshot', async () => {
    await engine.exec('create table innodb_things (id varchar(20) primary key, status varchar(20), version integer not null) engine=InnoDB')
    await engine.exec("insert into innodb_things values ('a', 'active', 1)")
    const connector = engine.connector('innodb_things', FIELDS)
    const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })
    assert.equal(outcome.kind, 'written')
    const session = await connector.openSession()
    assert.equal(session.consistentSnapshot, true)
    await session.close()
  })

  it('a MEMORY table is refused the same way', async () => {
    const write = engine.connector('memory_things', FIELDS).write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })
    await assert.rejects(write, (error: unknown) => error instanceof WarrantError && /MEMORY table/.test(error.message))
  })
})

// A view has no engine of its own: the catalogue showed none, and it was taken as transactional. A write through a
// view over a MyISAM table whose DECIMAL(10,2) rounded 1.234 was refused after its UPDATE and answered "rolled back,
// nothing was written", while the row kept 1.23 at version 2; a walk of it was called a consistent snapshot.
describe('sql: a view over a table without transactions (mysql)', () => {
  let engine: Engine
  const PRICED = { id: 'string', version: 'integer', price: 'number' }
  const VIEW_FIX = /table (priced|nested|joined) is a view over tables not all shown to keep transactions.*no write is sent to it/
  before(async () => {
    engine = await createEngine('mysql')
    for (const statement of [
      'create table raw (id varchar(10) primary key, version integer not null, price decimal(10,2)) engine=MyISAM',
      'create table kept (id varchar(10) primary key, version integer not null, price decimal(10,2)) engine=InnoDB',
      "insert into raw values ('a', 1, 1.00)",
      "insert into kept values ('a', 1, 1.00)",
      'create view priced as select id, version, price from raw',
      'create view nested as select * from priced',
      'create view joined as select k.id, k.version, k.price from kept k join raw r on r.id = k.id',
      'create view kept_view as select id, version, price from kept',
      'create view kept_nested as select * from kept_view',
    ])
      await engine.exec(statement)
  })
  after(() => engine?.drop())

  for (const view of ['priced', 'nested', 'joined'])
    it(`${view}: a write is refused before it is sent, the rows as they were; a walk is no consistent snapshot`, async () => {
      const connector = engine.connector(view, PRICED)
      const write = connector.write({ id: 'a', expectedVersion: '1', set: { price: 1.234 }, precondition: {} })
      await assert.rejects(write, (error: unknown) => error instanceof WarrantError && VIEW_FIX.test(error.message))
      assert.deepEqual(await engine.rows('select version, price from raw union all select version, price from kept'), [
        { version: 1, price: '1.00' },
        { version: 1, price: '1.00' },
      ])
      const session = await connector.openSession()
      assert.equal(session.consistentSnapshot, false)
      await session.close()
    })

  for (const view of ['kept_view', 'kept_nested'])
    it(`${view}, over InnoDB alone: written, and read under a consistent snapshot`, async () => {
      const connector = engine.connector(view, PRICED)
      const session = await connector.openSession()
      assert.equal(session.consistentSnapshot, true)
      await session.close()
      const [{ version }] = (await engine.rows('select version from kept')) as [{ version: number }]
      const outcome = await connector.write({ id: 'a', expectedVersion: String(version), set: { price: 2.5 }, precondition: {} })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    })
})
