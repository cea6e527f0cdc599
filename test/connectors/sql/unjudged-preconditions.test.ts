import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A write's precondition on a field whose column holds a value the declared type cannot judge: a boolean 2 (a
 * SQLite INTEGER, MariaDB's BOOLEAN, TINYINT(1)), a timestamp kept as text in another spelling than toISOString's
 * ('2024-06-01 13:00:00', shown as 13:00 UTC). A page read counts such a row as not judged; a precondition was the
 * SQL's last word: `not_in: [true]` held on 2, and `lt: 12:30` held on 13:00 (a space sorts before "T"), so the
 * write was made on a record the plan could not judge, or that did not meet it. Such a precondition now never
 * holds, on every engine where the column can hold such a value.
 */
const TABLE: Record<Kind, string> = {
  sqlite: 'create table t (id text primary key, version integer not null, flag integer, at text, note text)',
  postgres: 'create table t (id text primary key, version integer not null, flag integer, at text, note text)',
  mysql: 'create table t (id varchar(10) primary key, version int not null, flag tinyint(1), at varchar(40), note text)',
}

for (const kind of ['sqlite', 'postgres', 'mysql'] as const)
  describe(`sql on ${kind}: a precondition on a value its field's type cannot judge`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(TABLE[kind])
      await engine.exec(`insert into t values ('two', 1, 2, '2024-06-01T00:00:00.000Z', 'n')`)
      await engine.exec(`insert into t values ('spaced', 1, 1, '2024-06-01 13:00:00', 'n')`)
      await engine.exec(`insert into t values ('ok', 1, 0, '2024-06-01T13:00:00.000Z', 'n')`)
    })
    after(() => engine?.drop())

    const cases: [string, Filter][] = [
      ['two', { flag: { not_in: [true] } }],
      ['two', { flag: { in: [true, false] } }],
      ['spaced', { at: { lt: '2024-06-01T12:30:00Z' } }],
    ]
    // PostgreSQL refuses a boolean parameter against an integer column outright (422, the write not made): no boolean case there
    for (const [id, precondition] of cases.filter(([, p]) => kind !== 'postgres' || !('flag' in p)))
      it(`${id} ${JSON.stringify(precondition)}: does not hold, nothing is written`, async () => {
        const connector = engine.connector('t', { id: 'string', version: 'integer', flag: 'boolean', at: 'timestamp', note: 'string' })
        const outcome = await connector.write({ id, expectedVersion: '1', set: { note: 'x' }, precondition })
        assert.notEqual(outcome.kind, 'written', JSON.stringify(outcome))
        const [row] = await engine.rows(`select note from t where id = '${id}'`)
        assert.equal(row!.note, 'n')
      })

    it('a value of its type: the precondition holds as before', async () => {
      const connector = engine.connector('t', { id: 'string', version: 'integer', flag: 'boolean', at: 'timestamp', note: 'string' })
      const outcome = await connector.write({ id: 'ok', expectedVersion: '1', set: { note: 'x' }, precondition: kind === 'postgres' ? { at: { gt: '2024-06-01T12:30:00Z' } } : { flag: { not_in: [true] }, at: { gt: '2024-06-01T12:30:00Z' } } })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    })
  })
