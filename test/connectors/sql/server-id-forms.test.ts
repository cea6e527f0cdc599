import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SourceRecord } from '../../../src/connectors/connector.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * MariaDB/MySQL and PostgreSQL id columns of every type an id may sit on, holding values whose shown id is not the
 * spelling the read-by-id binding sends: a decimal(10,2) 1 is shown as "1.00", a varchar '1.0' as "1.0". A read by
 * that id said missing and a write "no such record", a false absence. Every declared type × stored value × id
 * type: the id a walk shows finds its own row, by id, by write and in a write window, beside ids of other shapes.
 */
const DECLARED: Record<'mysql' | 'postgres', readonly string[]> = {
  mysql: ['decimal(10,2)', 'decimal(30,0)', 'decimal(40,0)', 'decimal(65,2)', 'double', 'bigint', 'int', 'bigint unsigned', 'varchar(30)', 'char(5)', 'varchar(30) collate utf8mb4_bin'],
  postgres: ['numeric(10,2)', 'numeric', 'real', 'double precision', 'bigint', 'integer', 'varchar(30)', 'text', 'char(5)'],
}
const STORED = ['1', '1.5', "'1.0'", "'01'", "'abc'", "' 1'", "'1e0'", '-0.5', '123456789012', '0.1', '9007199254740993', "'1.10'", '1234567890123456789012345678901234567890'] as const
const ID_TYPES = ['string', 'integer', 'number'] as const

async function walk(connector: SqlConnector): Promise<SourceRecord[] | null> {
  const session = await connector.openSession()
  try {
    const page = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 50 })
    return page.kind === 'page' ? [...page.items] : null
  } finally {
    await session.close()
  }
}

/** What goes wrong for each record a walk of `connector` shows: its own id read, written, written in a window. */
async function failuresOf(connector: SqlConnector, stored: string): Promise<string[]> {
  const failures: string[] = []
  // a walk the table refuses (said so) shows no id to check
  for (const record of (await walk(connector)) ?? []) {
    const where = `stored ${stored} shown as "${record.id}"`
    // beside ids of other shapes: one an id type rejects must not fail the batch
    const read = await connector.readByIds([record.id, 'not-an-id', '2'])
    if (read.records.get(record.id)?.fields.name !== 'row') failures.push(`${where}: read by id ${JSON.stringify({ missing: read.missing, failed: read.failed })}`)
    const written = await connector.write({ id: record.id, expectedVersion: record.version, set: { name: 'one' }, precondition: {} })
    if (written.kind !== 'written' || written.record?.id !== record.id) failures.push(`${where}: write ${JSON.stringify(written)}`)
    // MySQL/MariaDB keep no write window
    const windowed = (await connector.writeWindow?.([{ id: record.id, expectedVersion: '2', set: { name: 'two' }, precondition: {} }])) ?? [{ kind: 'written' }]
    if (windowed[0]?.kind !== 'written') failures.push(`${where}: window ${JSON.stringify(windowed)}`)
  }
  return failures
}

for (const kind of ['mysql', 'postgres'] as const satisfies readonly Kind[])
  describe(`sql on ${kind}: an id column of any type, holding any value`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
    })
    after(() => engine?.drop())

    let n = 0
    for (const idType of ID_TYPES)
      for (const declared of DECLARED[kind])
        it(`id ${idType} over ${declared}: every id a walk shows is read and written as its own row`, async () => {
          const failures: string[] = []
          for (const stored of STORED) {
            const table = `t${++n}`
            await engine.exec(`create table ${table} (id ${declared} primary key, version integer not null, name text)`)
            try {
              await engine.exec(`insert into ${table} values (${stored}, 1, 'row')`)
            } catch {
              continue // the column does not take it
            }
            const connector = engine.connector(table, { id: idType, version: 'integer', name: 'string' })
            try {
              failures.push(...(await failuresOf(connector, stored)))
            } finally {
              await connector.close()
            }
          }
          assert.deepEqual(failures, [])
        })
  })

describe('sql on postgres: ids a typed id column cannot read, in one batch with one it holds', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('postgres')
  })
  after(() => engine?.drop())

  for (const [declared, stored, shown, others] of [
    ['numeric(10,2)', '1', '1.00', ['not-an-id', '1e', '']],
    ['integer', '1', '1', ['1.5', '99999999999', 'x']],
    ['real', '2', '2', ['2.0', 'abc']],
  ] as const)
    it(`${declared}: "${shown}" is read and written; ${others.map((o) => JSON.stringify(o)).join(', ')} fail, saying why, none missing`, async () => {
      const table = `b_${declared.replace(/\W/g, '_')}`
      await engine.exec(`create table ${table} (id ${declared} primary key, version integer not null, name text)`)
      await engine.exec(`insert into ${table} values (${stored}, 1, 'row')`)
      for (const idType of ID_TYPES) {
        const connector = engine.connector(table, { id: idType, version: 'integer', name: 'string' })
        const read = await connector.readByIds([shown, ...others])
        assert.equal(read.records.get(shown)?.fields.name, 'row', `${idType}: ${JSON.stringify(read.failed)}`)
        assert.deepEqual(read.missing, [], idType)
        assert.deepEqual(read.failed.map((f) => f.id).sort(), [...others].sort(), idType)
        for (const f of read.failed) assert.match(f.message, new RegExp(`cannot be a value of id column "id" of table ${table} \\(${declared.replace(/[()]/g, '\\$&')}\\)`))
        const written = await connector.write({ id: others[0], expectedVersion: '1', set: { name: 'other' }, precondition: {} })
        assert.equal(written.kind, 'rejected', JSON.stringify(written))
        const windowed = await connector.writeWindow!([
          { id: others[0], expectedVersion: '1', set: { name: 'row' }, precondition: {} },
          { id: shown, expectedVersion: read.records.get(shown)!.version, set: { name: 'row' }, precondition: {} },
        ])
        assert.deepEqual(windowed.map((w) => w.kind), ['rejected', 'written'], JSON.stringify(windowed))
      }
    })

  it('a real id past the type\'s range fails the statement: read again id by id, it fails alone', async () => {
    await engine.exec('create table far (id real primary key, version integer not null, name text)')
    await engine.exec("insert into far values (1, 1, 'row')")
    const read = await engine.connector('far', { id: 'number', version: 'integer', name: 'string' }).readByIds(['1', '1e+39'])
    assert.equal(read.records.get('1')?.fields.name, 'row', JSON.stringify(read.failed))
    assert.deepEqual(read.missing, [])
    assert.deepEqual(read.failed.map((f) => f.id), ['1e+39'])
  })
})

describe('sql on mysql: a FLOAT id column, whose ids a record shows rounded', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table approx (id float primary key, version integer not null, name text)')
    await engine.exec("insert into approx values (0.1, 1, 'row')")
  })
  after(() => engine?.drop())

  for (const idType of ID_TYPES)
    it(`id ${idType}: the walk, a read by id and a write are refused, saying why; "0.1" is never missing`, async () => {
      const connector = engine.connector('approx', { id: idType, version: 'integer', name: 'string' })
      const session = await connector.openSession()
      try {
        const page = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 50 })
        assert.equal(page.kind, 'refused', JSON.stringify(page))
      } finally {
        await session.close()
      }
      const read = await connector.readByIds(['0.1'])
      assert.deepEqual([read.records.size, read.missing], [0, []])
      assert.match(read.failed[0]?.message ?? '', /is FLOAT/)
      await assert.rejects(connector.write({ id: '0.1', expectedVersion: '1', set: { name: 'x' }, precondition: {} }), /is FLOAT/)
      assert.deepEqual(await engine.rows('select name from approx'), [{ name: 'row' }])
    })
})

describe('sql on mysql: a varchar id under a case-insensitive PAD SPACE collation', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table folded (id varchar(20) collate utf8mb4_general_ci primary key, version integer not null, name text)')
    await engine.exec("insert into folded values ('abc', 1, 'row'), ('x', 1, 'row')")
  })
  after(() => engine?.drop())

  // (an integer or number id over "abc" is a record of another type than declared: failed, see page-judge.ts)
  for (const idType of ['string'] as const)
    it(`id ${idType}: "ABC" and "x " name neither row, are not missing, and write nothing; "abc" and "x" are their rows`, async () => {
      const connector = engine.connector('folded', { id: idType, version: 'integer', name: 'string' })
      const read = await connector.readByIds(['abc', 'x', 'ABC', 'x '])
      assert.deepEqual([...read.records.keys()].sort(), ['abc', 'x'])
      assert.deepEqual(read.missing, [])
      assert.deepEqual(read.failed.map((f) => f.id).sort(), ['ABC', 'x '])
      for (const f of read.failed) assert.match(f.message, /matches the row stored as/)
      for (const id of ['ABC', 'x ']) {
        const written = await connector.write({ id, expectedVersion: '1', set: { name: 'wrong' }, precondition: {} })
        assert.notEqual(written.kind, 'written', JSON.stringify(written))
      }
      assert.deepEqual((await engine.rows('select name from folded order by id')).map((r) => r.name), ['row', 'row'])
    })
})
