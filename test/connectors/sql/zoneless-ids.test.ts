import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A PostgreSQL `date` or `timestamp(0)` id column, its ids declared `timestamp`. A walk shows each id as the UTC
 * instant it holds ("2024-06-01T00:00:00.000Z", under any TZ of the gateway process), and writes by those ids
 * address their rows. But the engine reads any other spelling of an id its own way: a date column reads
 * "2024-06-01T12:00:00.000Z" as 2024-06-01, a column without a zone reads "2024-06-02T12:00:00.000+02:00" as
 * 12:00 (the row shown as 12:00Z, two hours from the instant the id names). A write to such an id was committed on
 * that row, answered `written` of another record: a row no reviewer named was changed. Such ids are now refused
 * before anything is sent (a read by them fails, as it did), and the ids a walk shows still read and write their rows.
 * MySQL/MariaDB DATE, DATETIME and TIMESTAMP the same; there the ids a walk shows went as their ISO text, which the
 * server reads as a truncated value: a read of two of them said both missing, and a write to one was answered
 * "no longer meets the action's precondition" (the strict UPDATE matched no row). They now go as the instant.
 */
interface Ids {
  readonly rows: readonly [string, string]
  readonly shown: readonly [string, string]
  readonly others: readonly string[]
}
const DATE: Ids = { rows: ['2024-06-01', '2024-06-02'], shown: ['2024-06-01T00:00:00.000Z', '2024-06-02T00:00:00.000Z'], others: ['2024-06-01T12:00:00.000Z', '2024-06-02', '2024-06-01T23:00:00.000-05:00'] }
const STAMP: Ids = { rows: ['2024-06-01 00:00:00', '2024-06-02 12:00:00'], shown: ['2024-06-01T00:00:00.000Z', '2024-06-02T12:00:00.000Z'], others: ['2024-06-02T12:00:00.000+02:00', '2024-06-01', '2024-06-01 00:00:00'] }
/** MySQL/MariaDB DATE and DATETIME (no zone, like PostgreSQL's date and timestamp) read an offset or a bare date their own way too. */
const COLUMNS: Readonly<Record<'postgres' | 'mysql', Readonly<Record<string, Ids>>>> = {
  postgres: { date: DATE, 'timestamp(0)': STAMP },
  mysql: { date: DATE, datetime: STAMP, timestamp: STAMP, 'datetime(3)': { ...STAMP, others: [...STAMP.others, '2024-06-02T12:00:00.000+00:00', '2024-06-02T12:00:00Z'] } },
}
const TEXT = { postgres: `to_char(id, 'YYYY-MM-DD HH24:MI')`, mysql: `date_format(id, '%Y-%m-%d %H:%i')` } as const
const FIELDS = { id: 'timestamp', status: 'string', version: 'integer' }
const CANNOT = /cannot be a value of id column "id" of table things/

for (const zone of ['America/New_York', 'Asia/Tokyo']) {
  for (const kind of ['postgres', 'mysql'] as const) for (const [column, { rows, shown, others }] of Object.entries(COLUMNS[kind])) {
    describe(`sql on ${kind}: a ${column} id column, the gateway under TZ=${zone}`, () => {
      let engine: Engine
      let connector: SqlConnector
      const saved = process.env.TZ
      const table = async () => (await engine.rows(`select ${TEXT[kind]} as id, status, version from things order by id`)).map((r) => `${r.id} ${r.status} ${r.version}`)
      before(async () => {
        process.env.TZ = zone
        engine = await createEngine(kind)
        await engine.exec(`create table things (id ${column} primary key, status text, version integer not null)`)
        await engine.exec(`insert into things values ('${rows[0]}', 'active', 1), ('${rows[1]}', 'active', 1)`)
        connector = engine.connector('things', FIELDS)
      })
      after(async () => {
        await engine?.drop()
        if (saved === undefined) delete process.env.TZ
        else process.env.TZ = saved
      })

      it('a walk shows each id as the UTC instant stored, and a read by those ids finds each row', async () => {
        const envelope = await search(connector, {}, 10)
        assert.deepEqual(envelope.items.map((r) => r.id), shown)
        assert.equal(envelope.complete, true)
        const read = await connector.readByIds([...shown])
        assert.deepEqual([...read.records.keys()], shown)
        assert.deepEqual(read.missing, [])
      })

      it('a write or a window to an id spelled otherwise is refused before anything is written; a read by it fails', async () => {
        const before = await table()
        for (const id of others) {
          const outcome = await connector.write({ id, expectedVersion: '1', set: { status: 'paused' }, precondition: {} })
          assert.equal(outcome.kind, 'rejected', `${id}: ${JSON.stringify(outcome)}`)
          assert.match(outcome.kind === 'rejected' ? outcome.message : '', CANNOT)
          assert.match(outcome.kind === 'rejected' ? outcome.message : '', /nothing was written/)
        }
        const window = kind === 'mysql' ? [] : await connector.writeWindow!(others.map((id) => ({ id, expectedVersion: '1', set: { status: 'paused' }, precondition: {} })))
        for (const outcome of window) assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
        assert.deepEqual(await table(), before)
        const read = await connector.readByIds([...others])
        assert.deepEqual([...read.records.keys()], [])
        assert.deepEqual(read.missing, [])
        assert.deepEqual(read.failed.map((f) => f.id), [...others])
      })

      it('a write by the id a walk shows writes its row, and only it', async () => {
        const outcome = await connector.write({ id: shown[1], expectedVersion: '1', set: { status: 'paused' }, precondition: {} })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'written' && outcome.record?.id, shown[1])
        assert.deepEqual(await table(), [`${rows[0].slice(0, 10)} 00:00 active 1`, `${rows[1].slice(0, 10)} ${column === 'date' ? '00:00' : '12:00'} paused 2`])
      })
    })
  }
}
