import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SourceRecord } from '../../../src/connectors/connector.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A SQLite id column keeps each value in the storage class its declared type's affinity gives it: a TEXT column
 * keeps 1 as '1', a column of no type or BLOB keeps the integer 1, the real 1.0 and the text '1' apart, and all
 * three show as the id "1". A read by id bound "1" as the text '1' (a string id) or as the real 1.0 (a number id:
 * the driver binds every number as a real, which a TEXT column turns into '1.0'), so a record the walk had just
 * shown read as absent, and a write to it said "no such record". Every declared type × every stored form × every
 * id type: the id a walk shows finds its own row, by id and by write, and an id two rows show finds neither.
 */
const DECLARED = ['TEXT', 'INTEGER', 'NUMERIC', 'REAL', '', 'BLOB'] as const
const STORED = ['1', "'1'", '1.0', '1.5', "'1.0'", "'01'", "'abc'", '9007199254740993'] as const
const ID_TYPES = ['string', 'integer', 'number'] as const

describe('sql on sqlite: an id column of any declared type, holding any storage class', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
  })
  after(() => engine?.drop())

  const walk = async (connector: SqlConnector): Promise<SourceRecord[]> => {
    const session = await connector.openSession()
    try {
      const page = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 50 })
      return page.kind === 'page' ? [...page.items] : []
    } finally {
      await session.close()
    }
  }

  let n = 0
  for (const idType of ID_TYPES)
    for (const declared of DECLARED)
      for (const key of ['primary key', 'unique', ''])
        it(`id ${idType} over ${declared || 'no type'} ${key || 'without a key'}: every id a walk shows is read and written as its own row`, async () => {
          const failures: string[] = []
          for (const stored of STORED) {
            const table = `t${++n}`
            await engine.exec(`create table ${table} (id ${declared} ${key}, version integer not null, name text)`)
            try {
              await engine.exec(`insert into ${table} values (${stored}, 1, 'row')`)
            } catch {
              continue // an INTEGER PRIMARY KEY takes integers only
            }
            const connector = engine.connector(table, { id: idType, version: 'integer', name: 'string' })
            for (const record of await walk(connector)) {
              const where = `stored ${stored} shown as "${record.id}"`
              const read = await connector.readByIds([record.id])
              if (read.records.get(record.id)?.fields.name !== 'row') failures.push(`${where}: read by id ${JSON.stringify({ missing: read.missing, failed: read.failed })}`)
              const written = await connector.write({ id: record.id, expectedVersion: record.version, set: { name: 'one' }, precondition: {} })
              if (written.kind !== 'written' || written.record?.id !== record.id) failures.push(`${where}: write ${JSON.stringify(written)}`)
              const windowed = await connector.writeWindow!([{ id: record.id, expectedVersion: '2', set: { name: 'two' }, precondition: {} }])
              if (windowed[0]?.kind !== 'written') failures.push(`${where}: window ${JSON.stringify(windowed)}`)
            }
          }
          assert.deepEqual(failures, [])
        })

  for (const declared of ['', 'BLOB'])
    for (const [a, b] of [['1', "'1'"], ['1.0', "'1'"], ['1.5', "'1.5'"]] as const)
      it(`two rows ${a} and ${b} a ${declared || 'no type'} unique column keeps apart, both shown "${b.slice(1, -1)}": neither is read or written as that id`, async () => {
        const table = `two${++n}`
        await engine.exec(`create table ${table} (id ${declared} unique, version integer not null, name text)`)
        await engine.exec(`insert into ${table} values (${a}, 1, 'first'), (${b}, 1, 'second')`)
        const shown = b.slice(1, -1)
        for (const idType of ['string', 'number'] as const) {
          const connector = engine.connector(table, { id: idType, version: 'integer', name: 'string' })
          const read = await connector.readByIds([shown])
          assert.equal(read.records.size, 0, `${idType}: one of two rows was read as "${shown}"`)
          assert.deepEqual(read.missing, [], `${idType}: two rows are not an absence`)
          assert.match(read.failed[0]?.message ?? '', /2 rows/)
          const written = await connector.write({ id: shown, expectedVersion: '1', set: { name: 'changed' }, precondition: {} })
          assert.notEqual(written.kind, 'written', JSON.stringify(written))
          const windowed = await connector.writeWindow!([{ id: shown, expectedVersion: '1', set: { name: 'changed' }, precondition: {} }])
          assert.notEqual(windowed[0]?.kind, 'written', JSON.stringify(windowed))
          assert.deepEqual((await engine.rows(`select name from ${table} order by name`)).map((r) => r.name), ['first', 'second'])
          // the column's unique index proves no shown id names one row: a walk checks its pages, and refuses
          const envelope = await search(connector, {}, 100)
          assert.equal(envelope.complete, false, JSON.stringify(envelope.items.map((i) => i.id)))
          assert.match(JSON.stringify(envelope.incomplete_reasons), /held by two rows/)
        }
      })
})
