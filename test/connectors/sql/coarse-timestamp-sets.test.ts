import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { assertColumnsFit } from '../../../src/plans/set-types.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A timestamp set into a column keeping fewer digits of a second than a record shows: PostgreSQL rounded
 * 12:00:00.123 into timestamp(2) to 12:00:00.12 and a date kept the day alone, and the write was answered "written"
 * with the record showing another instant than approved (MariaDB's DATETIME cut it and was refused only when read back
 * after the UPDATE). Such a value is now refused at proposal and before anything is sent, naming the column and what
 * it keeps; an instant the column keeps whole is written.
 */
const CASES: Record<'postgres' | 'mysql', { columns: string; refused: [string, string, RegExp][]; kept: Record<string, string> }> = {
  postgres: {
    columns: 't2 timestamp(2), tz0 timestamp(0) with time zone, d date',
    refused: [
      ['t2', '2024-06-01T12:00:00.123Z', /timestamp\(2\) without time zone, which keeps a string as written only when it is an instant with at most 2 digit\(s\) of a second/],
      ['tz0', '2024-06-01T12:00:00.5+02:00', /timestamp\(0\) with time zone, which keeps .* an instant in whole seconds/],
      ['d', '2024-06-01T12:00:00Z', /is date, which keeps .* an instant at midnight UTC/],
    ],
    kept: { t2: '2024-06-01T12:00:00.120Z', tz0: '2024-06-01T10:00:01.000Z', d: '2024-06-01T00:00:00.000Z' },
  },
  mysql: {
    columns: 't2 datetime(2), t0 datetime, d date',
    refused: [
      ['t2', '2024-06-01T12:00:00.123Z', /is datetime, which keeps .* an instant with at most 2 digit\(s\) of a second/],
      ['t0', '2024-06-01T12:00:00.500Z', /is datetime, which keeps .* an instant in whole seconds/],
      ['d', '2024-06-01T12:00:00Z', /is date, which keeps .* an instant at midnight UTC/],
    ],
    kept: { t2: '2024-06-01T12:00:00.120Z', t0: '2024-06-01T10:00:01.000Z', d: '2024-06-01T00:00:00.000Z' },
  },
}

for (const kind of ['postgres', 'mysql'] as const satisfies readonly Kind[]) {
  const { columns, refused, kept } = CASES[kind]
  describe(`sql on ${kind}: a timestamp set into a column keeping less of it`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id varchar(10) primary key, version integer not null, ${columns})`)
      await engine.exec("insert into things (id, version) values ('a', 1)")
      connector = engine.connector('things', { id: 'string', version: 'integer', ...Object.fromEntries(Object.keys(kept).map((f) => [f, 'timestamp'])) })
    })
    after(async () => void (await engine?.drop()))

    for (const [field, value, keeps] of refused) {
      it(`${field} = ${value}: refused at proposal and before anything is sent`, async () => {
        const strings = await connector.stringColumns!()
        assert.throws(() => assertColumnsFit('stamp', [], { [field]: value }, strings, []), (error: any) => error.code === 'invalid_request' && keeps.test(error.message) && error.message.includes(`sets "${field}" to "${value}"`))
        await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { [field]: value }, precondition: {} }), (error: any) => {
          assert.equal(error.code, 'invalid_request', error.message)
          assert.match(error.message, keeps)
          assert.match(error.message, /nothing was written/)
          return true
        })
        assert.deepEqual(await engine.rows("select version from things where id = 'a'"), [{ version: 1 }])
      })
    }

    it('instants the columns keep whole are written and read back as approved', async () => {
      const set = { t2: kept.t2, ...(kind === 'postgres' ? { tz0: '2024-06-01T12:00:01+02:00' } : { t0: '2024-06-01T10:00:01Z' }), d: '2024-06-01T00:00:00Z' }
      const written = await connector.write({ id: 'a', expectedVersion: '1', set, precondition: {} })
      assert.equal(written.kind, 'written', JSON.stringify(written))
      assert.deepEqual(written.kind === 'written' && written.record!.fields, { id: 'a', version: 2, ...kept })
    })
  })
}
