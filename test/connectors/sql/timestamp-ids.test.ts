import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WarrantError } from '../../../src/contract/index.js'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'

// A timestamp id on a column that keeps microseconds (PostgreSQL's timestamptz by default, MySQL's DATETIME(6)).
// The driver reads it as a JavaScript Date, to the millisecond: two rows 100 µs apart would be one id, and a read
// by that id finds neither. Such a column is refused, naming the fix; one of millisecond precision is an id.
const FIELDS = { id: 'timestamp', status: 'string', version: 'integer' }
const REFUSED = /id column "id" of table things is .*keeps 6 fractional digits.*declare the column with at most millisecond precision \(timestamp\(3\)\), or choose another id column/

const COLUMNS: Record<Exclude<Kind, 'sqlite'>, { micro: string; milli: string }> = {
  postgres: { micro: 'timestamptz', milli: 'timestamptz(3)' },
  mysql: { micro: 'datetime(6)', milli: 'datetime(3)' },
}

for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql: timestamp ids finer than a millisecond (${kind})`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id ${COLUMNS[kind].micro} primary key, status varchar(20), version integer not null)`)
      await engine.exec("insert into things values ('2024-06-01 12:00:00.000100', 'active', 1), ('2024-06-01 12:00:00.000200', 'past_due', 1)")
      await engine.exec(`create table milli (id ${COLUMNS[kind].milli} primary key, status varchar(20), version integer not null)`)
      await engine.exec("insert into milli values ('2024-06-01 12:00:00.001', 'active', 1), ('2024-06-01 12:00:00.002', 'past_due', 1)")
    })
    after(() => engine?.drop())

    it('a walk is not complete, and says why and what to do', async () => {
      const envelope = await search(engine.connector('things', FIELDS), {}, 100)
      assert.equal(envelope.complete, false, `returned ${JSON.stringify(envelope.items.map((i) => i.id))} and said complete`)
      assert.deepEqual(envelope.items, [])
      assert.match(envelope.incomplete_reasons.map((r) => r.message).join('; '), REFUSED)
    })

    it('a read by id fails, saying why, rather than calling the row missing', async () => {
      const result = await engine.connector('things', FIELDS).readByIds(['2024-06-01T12:00:00.000Z'])
      assert.deepEqual(result.missing, [])
      assert.match(result.failed[0]?.message ?? '', REFUSED)
    })

    it('a write is refused before it is sent', async () => {
      const write = engine.connector('things', FIELDS).write({ id: '2024-06-01T12:00:00.000Z', expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })
      await assert.rejects(write, (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && REFUSED.test(error.message))
      assert.deepEqual(await engine.rows("select status from things where status = 'cancelled'"), [])
    })

    it('a column of millisecond precision: every row walked, and read back by its id', async () => {
      const connector = engine.connector('milli', FIELDS)
      const envelope = await search(connector, {}, 1)
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      assert.deepEqual(envelope.items.map((i) => i.id), ['2024-06-01T12:00:00.001Z', '2024-06-01T12:00:00.002Z'])
      const read = await connector.readByIds(['2024-06-01T12:00:00.002Z'])
      assert.equal(read.records.get('2024-06-01T12:00:00.002Z')?.fields.status, 'past_due')
    })
  })
}
