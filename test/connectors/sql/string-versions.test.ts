import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A version field declared `string` moves by a fresh UUID on every write. Over a column that cannot hold one (an
 * INT, a DATETIME, a timestamptz) the engine converts it, or fails the statement: MySQL without STRICT kept
 * the UUID's leading digits or a zero date, a version no one handed out, and the write was answered `written`.
 * The catalogue says so before anything is sent: every write is refused, naming the column and the fix, and
 * `warrant check` reports it on the version_field line. Over a column that keeps text (SQLite keeps text in any
 * column, a PostgreSQL uuid) the write goes through, its version the UUID as written.
 */
const REFUSED: readonly { kind: Kind; column: string; value: string }[] = [
  { kind: 'postgres', column: 'integer', value: '1' },
  { kind: 'postgres', column: 'timestamptz', value: `'2024-06-01 12:00:00+00'` },
  { kind: 'mysql', column: 'int', value: '1' },
  { kind: 'mysql', column: 'datetime(3)', value: `'2024-06-01 12:00:00'` },
]
/**
 * A text column too short for the 36 characters of a UUID: PostgreSQL fails the write ("value too long"), MariaDB
 * in strict mode too, and without STRICT keeps its first n characters, a version no one handed out. (A business
 * column declared version by mistake is often such a one: `plan varchar(20)`.)
 */
const SHORT: readonly { kind: Kind; column: string; value: string }[] = [
  { kind: 'postgres', column: 'varchar(20)', value: `'free'` },
  { kind: 'postgres', column: 'char(35)', value: `'v1'` },
  { kind: 'mysql', column: 'varchar(20)', value: `'free'` },
  { kind: 'mysql', column: 'char(35)', value: `'v1'` },
]
const WRITTEN: readonly { kind: Kind; column: string; value: string }[] = [
  { kind: 'sqlite', column: 'integer', value: '1' },
  { kind: 'postgres', column: 'uuid', value: `'7d444840-9dc0-11d1-b245-5ffdce74fad2'` },
  { kind: 'mysql', column: 'varchar(40)', value: `'v1'` },
  { kind: 'mysql', column: 'char(36)', value: `'v1'` },
  { kind: 'postgres', column: 'varchar(36)', value: `'v1'` },
  { kind: 'sqlite', column: 'varchar(20)', value: `'v1'` },
]
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function table(kind: Kind, column: string, value: string) {
  const state: { engine?: Engine; connector?: SqlConnector; version?: string } = {}
  before(async () => {
    const engine = (state.engine = await createEngine(kind))
    await engine.exec(`create table things (id varchar(10) primary key, version ${column} not null, name varchar(10))`)
    await engine.exec(`insert into things values ('a', ${value}, 'n')`)
    state.connector = engine.connector('things', { id: 'string', version: 'string', name: 'string' })
    state.version = (await state.connector.readByIds(['a'])).records.get('a')!.version
  })
  after(async () => {
    await state.engine?.drop()
  })
  return state as Required<typeof state>
}

for (const { kind, column, value } of REFUSED) {
  describe(`sql on ${kind}: a string version over a ${column} column`, () => {
    const t = table(kind, column, value)
    const PROBLEM = /the version column "version" of table things is .*, which cannot hold the text versions a string version_field writes \(a UUID\).*declare version_field's field as the column is/

    it('a write is refused before anything is sent, naming the column and the fix', async () => {
      const outcome = await t.connector.write({ id: 'a', expectedVersion: t.version, set: { name: 'x' }, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match((outcome as { message: string }).message, PROBLEM)
      assert.match((outcome as { message: string }).message, /nothing was written/)
      assert.deepEqual((await t.engine.rows(`select name from things`)).map((r) => r.name), ['n'])
    })

    it('warrant check reports it on the version_field line', async () => {
      assert.match((await t.connector.versionColumnProblem!()) ?? '', PROBLEM)
    })
  })
}

for (const { kind, column, value } of SHORT) {
  describe(`sql on ${kind}: a string version over a ${column} column, too short for a UUID`, () => {
    const t = table(kind, column, value)
    const PROBLEM = /the version column "version" of table things is (varchar|char|character varying|character)\((20|35)\), which keeps at most (20|35) characters, fewer than the 36 of the UUID a string version_field writes.*so no write to it is made; .*a counter, updated_at/

    it('a write is refused before anything is sent, naming the column and the fix', async () => {
      const outcome = await t.connector.write({ id: 'a', expectedVersion: t.version, set: { name: 'x' }, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match((outcome as { message: string }).message, PROBLEM)
      assert.match((outcome as { message: string }).message, /nothing was written/)
      assert.deepEqual((await t.engine.rows(`select name, version from things`)).map((r) => [r.name, String(r.version).trim()]), [['n', value.slice(1, -1)]])
    })

    it('warrant check reports it on the version_field line', async () => {
      assert.match((await t.connector.versionColumnProblem!()) ?? '', PROBLEM)
    })
  })
}

for (const { kind, column, value } of WRITTEN) {
  describe(`sql on ${kind}: a string version over a ${column} column`, () => {
    const t = table(kind, column, value)

    it('a write goes through, its version the UUID it wrote, kept as written', async () => {
      assert.equal(await t.connector.versionColumnProblem!(), null)
      const outcome = await t.connector.write({ id: 'a', expectedVersion: t.version, set: { name: 'x' }, precondition: {} })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      const version = (outcome as { record: { version: string } }).record.version
      assert.match(version, UUID)
      assert.equal((await t.connector.readByIds(['a'])).records.get('a')?.version, version)
    })
  })
}
