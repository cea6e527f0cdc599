import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A PostgreSQL `timestamp` (without time zone) or `date` names no instant; a sql upstream's such value is read as
 * UTC (README: SQLite's `2024-06-01 13:00:00` is UTC; MySQL's DATETIME is read in UTC), and the SQL compares a
 * filter's instant with it as UTC (the ISO parameter's zone is dropped). pg read both in the gateway process's own
 * time zone: under TZ=Europe/Berlin a row holding 12:00 was shown as 10:00Z, while `ts < 11:00Z` in SQL left it out,
 * complete. MariaDB's DATETIME and DATE, read in UTC already, are the reference.
 */
const ZONELESS = { postgres: ['timestamp(3)', 'date'], mysql: ['datetime(3)', 'date'] } as const
const FIELDS = { id: 'string', version: 'integer', ts: 'timestamp', d: 'timestamp' }

for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: times without a zone are UTC, whatever the gateway's own time zone`, () => {
    let engine: Engine
    const zone = process.env.TZ
    before(async () => {
      process.env.TZ = 'Europe/Berlin'
      engine = await createEngine(kind)
      const [ts, d] = ZONELESS[kind]
      await engine.exec(`create table t (id varchar(10) primary key, version integer not null, ts ${ts}, d ${d})`)
      await engine.exec("insert into t values ('a', 1, '2024-06-01 12:00:00', '2024-06-01'), ('b', 1, '2024-06-02 12:00:00.250', '2024-06-02')")
    })
    after(async () => {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
      await engine?.drop()
    })

    it('a record shows the stored wall-clock time as that time in UTC, a date as its midnight in UTC', async () => {
      const all = await search(engine.connector('t', FIELDS), {}, 1)
      assert.deepEqual(
        all.items.map((i) => [i.id, i.fields.ts, i.fields.d]),
        [
          ['a', '2024-06-01T12:00:00.000Z', '2024-06-01T00:00:00.000Z'],
          ['b', '2024-06-02T12:00:00.250Z', '2024-06-02T00:00:00.000Z'],
        ],
      )
      const read = await engine.connector('t', FIELDS).readByIds(['a'])
      assert.equal(read.records.get('a')?.fields.ts, '2024-06-01T12:00:00.000Z')
    })

    it('a filter answers the records whose shown time meets it', async () => {
      const ids = async (filter: object) => (await search(engine.connector('t', FIELDS), filter as never, 1)).items.map((i) => i.id)
      assert.deepEqual(await ids({ ts: { lt: '2024-06-01T11:00:00Z' } }), [])
      assert.deepEqual(await ids({ ts: { gte: '2024-06-01T12:00:00Z' } }), ['a', 'b'])
      assert.deepEqual(await ids({ ts: { eq: '2024-06-02T12:00:00.250Z' } }), ['b'])
    })
  })
}
