import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A `timestamp` field over a TIME column (a time of day, no date): every value is shown as stored ('10:00:00') and
 * named as not judged, but a filter on it was sent all the same, and the engine compared times of day (PostgreSQL
 * read the filter's instant as its time, MySQL compared it its own way): a filter no row met answered nothing,
 * complete. Such a filter is now refused, naming the column and the fix, as a number over a text column is.
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a timestamp field over a TIME column`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id varchar(10) primary key, version int not null, t time)`)
      await engine.exec(`insert into things values ('a', 1, '10:00:00'), ('b', 1, '23:00:00')`)
      connector = engine.connector('things', { id: 'string', version: 'integer', t: 'timestamp' })
    })
    after(async () => {
      await engine?.drop()
    })

    for (const filter of [{ t: { lt: '2024-01-01T09:00:00Z' } }, { t: { gt: '2024-01-01T23:30:00Z' } }]) {
      it(`${JSON.stringify(filter)} is refused, naming the column and the fix; never an empty complete answer`, async () => {
        const envelope = await search(connector, filter, 2)
        assert.deepEqual(envelope.items, [])
        assert.equal(envelope.complete, false)
        assert.match(envelope.incomplete_reasons[0]?.message ?? '', /field "t" is declared timestamp, but column "t" of table things is time.*times of day.*no filter on it can be trusted/)
      })
    }
  })
}
