import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'
import { idRefusedTests } from './support/refused-ids.js'

/**
 * An id column of bytes (MySQL/MariaDB VARBINARY, BINARY(16) uuids, a BLOB; PostgreSQL bytea or a domain over
 * it) is read as a Buffer: its id was the bytes decoded as UTF-8, so 0xFFFF and 0xFEFF both became
 * "\uFFFD\uFFFD" (one key for two rows), a read or write by that key answered "no such record", and a walk's
 * position held the Buffer, which the next page refused as a cursor it had not issued (a walk of pages of one
 * row failed at once, "retry"). Such a column is refused as an id, reads and writes alike, naming the column
 * and the fix.
 */
const SERVER_CASES = [
  { kind: 'mysql', setup: [`create table things (id varbinary(16) primary key, version int not null, name varchar(10)) engine = InnoDB`], bytes: (hex: string) => `unhex('${hex}')`, type: 'varbinary' },
  // a BIT(n) is read as a Buffer of its bytes too (b'0000000001100001' as "\u0000a")
  { kind: 'mysql', setup: [`create table things (id bit(16) primary key, version int not null, name varchar(10)) engine = InnoDB`], bytes: (hex: string) => String(parseInt(hex, 16)), type: 'bit' },
  { kind: 'postgres', setup: [`create table things (id bytea primary key, version int not null, name text)`], bytes: (hex: string) => `'\\x${hex}'::bytea`, type: 'bytea' },
  { kind: 'postgres', setup: [`create domain key_bytes as bytea`, `create table things (id key_bytes primary key, version int not null, name text)`], bytes: (hex: string) => `'\\x${hex}'::bytea`, type: 'key_bytes' },
] as const

for (const { kind, setup, bytes, type } of SERVER_CASES) {
  describe(`sql connector on ${kind}: an id column of bytes (${type})`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine(kind)
      for (const statement of setup) await engine.exec(statement)
      await engine.exec(`insert into things values (${bytes('61')}, 1, 'n'), (${bytes('62')}, 1, 'n'), (${bytes('FFFF')}, 1, 'n'), (${bytes('FEFF')}, 1, 'n')`)
      connector = engine.connector('things', { id: 'string', version: 'integer', name: 'string' })
    })
    after(async () => {
      await engine?.drop()
    })

    const REFUSAL = new RegExp(`id column "id" of table things is ${type}.*choose another id column`)

    idRefusedTests(() => connector, REFUSAL, { read: ['a', '\uFFFD\uFFFD'], write: 'a' }, async () => {
      assert.deepEqual(await engine.rows(`select version, name from things where id = ${bytes('61')}`), [{ version: 1, name: 'n' }])
    })
  })
}

/**
 * SQLite keeps a blob in any column (a BLOB one holds text too): a blob id is per row. It was shown as its bytes
 * decoded as UTF-8 (x'FFFF' and x'FEFF' one id), a walk of pages of one failed on its position, and a read by the
 * shown id answered "missing". Such rows are now left out of every page and counted as not judged, the walk not
 * complete; the rows keyed by text are read as before.
 */
for (const declared of ['text', 'blob', '']) {
  describe(`sql connector on sqlite: blob values in an id column declared "${declared}"`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine('sqlite')
      await engine.exec(`create table things (id ${declared} primary key not null, version int not null, name text)`)
      await engine.exec(`insert into things values ('a', 1, 'n'), ('b', 1, 'm'), (x'FFFF', 1, 'n'), (x'FEFF', 1, 'n')`)
      connector = engine.connector('things', { id: 'string', version: 'integer', name: 'string' })
    })
    after(async () => {
      await engine?.drop()
    })

    for (const [filter, matching, unjudged] of [
      [{}, ['a', 'b'], 2],
      [{ name: 'n' }, ['a'], 2],
      [{ name: 'm' }, ['b'], 0],
    ] as const) {
      it(`${JSON.stringify(filter)} in pages of 1 and 10: ${JSON.stringify(matching)}, ${unjudged} blob id(s) named as not judged`, async () => {
        for (const pageSize of [1, 10]) {
          const envelope = await search(connector, filter, pageSize)
          assert.deepEqual(envelope.items.map((r) => r.id), matching)
          if (unjudged === 0) {
            assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
            continue
          }
          assert.equal(envelope.complete, false)
          const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
          assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
          assert.equal((reason as { record_count?: number }).record_count, unjudged)
          assert.deepEqual((reason as { fields?: string[] }).fields, ['id'])
        }
      })
    }
  })
}
