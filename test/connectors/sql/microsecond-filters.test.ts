import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { assertCompleteSearch, createEngine, search, type Engine } from './support/engine.js'

/**
 * A MySQL/MariaDB DATETIME(6) or TIMESTAMP(6), a PostgreSQL timestamptz (6 digits unless told otherwise), keeps
 * microseconds; a record shows the instant to the millisecond
 * (12:00:00.000500 as 12:00:00.000Z). A filter compared the microseconds: `eq` and `lte` on the instant a record
 * shows left that record out, `gt` took it in, each answer complete. A filter or precondition compares the
 * millisecond a record shows (on the column's index: `eq` t is t <= column < t + 1 ms).
 */
const FIELDS = { id: 'string', version: 'integer', dt: 'timestamp', ts: 'timestamp' }
const T0 = '2024-06-01T12:00:00.000Z'
const T1 = '2024-06-01T12:00:00.001Z'

const TABLES = {
  mysql: 'create table fine (id varchar(10) primary key, version integer not null, dt datetime(6), ts timestamp(6) null, key (dt), key (ts))',
  postgres: 'create table fine (id text collate "C" primary key, version integer not null, dt timestamptz(6), ts timestamptz, unique (id))',
} as const
/** The sessions run in UTC on MySQL; PostgreSQL is told the zone. */
const ZONE = { mysql: '', postgres: '+00' } as const

for (const kind of ['mysql', 'postgres'] as const)
  describe(`sql on ${kind}: filters on columns keeping microseconds`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(TABLES[kind])
      for (const [id, at] of [['a', '2024-06-01 12:00:00.000500'], ['b', '2024-06-01 12:00:00.000000'], ['c', '2024-06-01 12:00:00.001999'], ['d', null]] as const)
        await engine.exec(`insert into fine values ('${id}', 1, ${at === null ? 'null' : `'${at}${ZONE[kind]}'`}, ${at === null ? 'null' : `'${at}${ZONE[kind]}'`})`)
    })
    after(() => engine?.drop())

    it('a record shows each instant to the millisecond', async () => {
      const envelope = await search(engine.connector('fine', FIELDS), {}, 10)
      assert.deepEqual(envelope.items.map((i) => [i.fields.dt, i.fields.ts]), [[T0, T0], [T0, T0], [T1, T1], [null, null]])
    })

    for (const field of ['dt', 'ts']) {
      const cases: [Filter, string[]][] = [
        [{ [field]: T0 }, ['a', 'b']],
        [{ [field]: T1 }, ['c']],
        [{ [field]: { lte: T0 } }, ['a', 'b']],
        [{ [field]: { lt: T1 } }, ['a', 'b']],
        [{ [field]: { gt: T0 } }, ['c']],
        [{ [field]: { gte: T1 } }, ['c']],
        [{ [field]: { in: [T1, '2020-01-01T00:00:00Z'] } }, ['c']],
        [{ [field]: { not_in: [T0] } }, ['c']],
        [{ [field]: { gte: T0 } }, ['a', 'b', 'c']],
      ]
      for (const [filter, expected] of cases)
        it(`${JSON.stringify(filter)}: ${JSON.stringify(expected)}, complete`, () => assertCompleteSearch(engine.connector('fine', FIELDS), filter, expected))
    }

    it('a precondition on the instant a record shows holds', async () => {
      const outcome = await engine.connector('fine', FIELDS).write({ id: 'a', expectedVersion: '1', set: { ts: T1 }, precondition: { dt: { lte: T0 } } })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    })
  })
