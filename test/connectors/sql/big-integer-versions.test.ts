import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * An integer version past 2^53 in a BIGINT column: a walk shows it exactly ("9007199254740993"), but a write bound
 * the expected version as a JavaScript number only while it was a safe integer, and refused every other one as
 * "no integer version": a write to a record at the version it showed was answered `version_changed`, "is at
 * version 9007199254740993, not the expected version 9007199254740993". It now goes as a bigint. At 2^63 - 1 no
 * next version fits (SQLite would make `version + 1` a float): refused saying so, nothing written.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const ROWS: readonly [string, string][] = [
  ['a', '9007199254740993'],
  ['b', '9007199254740992'],
  ['c', '9223372036854775806'],
  ['d', '9223372036854775807'],
  ['e', '18014398509481985'],
  ['f', '18014398509481987'],
]

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: integer versions past 2^53`, () => {
    let engine: Engine
    let connector: SqlConnector
    const text = kind === 'mysql' ? 'char(30)' : 'text'
    const table = async () => (await engine.rows(`select id, status, cast(version as ${text}) as v from things order by id`)).map((r) => `${r.id} ${r.status} ${r.v}`)
    const write = (id: string, version: string) => connector.write({ id, expectedVersion: version, set: { status: 'paused' }, precondition: {} })
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id varchar(10) primary key, status text, version bigint not null)`)
      await engine.exec(`insert into things values ${ROWS.map(([id, v]) => `('${id}', 'active', ${v})`).join(', ')}`)
      connector = engine.connector('things', FIELDS)
    })
    after(async () => {
      await engine?.drop()
    })

    it('a walk shows each version exactly', async () => {
      const envelope = await search(connector, {}, 10)
      assert.deepEqual(envelope.items.map((r) => [r.id, r.version]), ROWS)
    })

    it('a write at a stale version is refused naming both versions, nothing written', async () => {
      const before = await table()
      const outcome = await write('a', '9007199254740992')
      assert.equal(outcome.kind, 'conflict', JSON.stringify(outcome))
      assert.equal(outcome.kind === 'conflict' && outcome.message, 'record "a" is at version 9007199254740993, not the expected version 9007199254740992')
      assert.deepEqual(await table(), before)
    })

    it('a write at the version a record shows writes it, the next version exact', async () => {
      for (const [id, version, next] of [['a', '9007199254740993', '9007199254740994'], ['b', '9007199254740992', '9007199254740993'], ['c', '9223372036854775806', '9223372036854775807']] as const) {
        const outcome = await write(id, version)
        assert.equal(outcome.kind, 'written', `${id}: ${JSON.stringify(outcome)}`)
        assert.equal(outcome.kind === 'written' && outcome.record?.version, next)
      }
      assert.deepEqual((await table()).slice(0, 3), ['a paused 9007199254740994', 'b paused 9007199254740993', 'c paused 9223372036854775807'])
    })

    it('a window writes them too', { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
      const outcomes = await connector.writeWindow!(['e', 'f'].map((id) => ({ id, expectedVersion: ROWS.find((r) => r[0] === id)![1], set: { status: 'paused' }, precondition: {} })))
      assert.deepEqual(outcomes.map((o) => o.kind), ['written', 'written'], JSON.stringify(outcomes))
      assert.deepEqual((await table()).slice(4), ['e paused 18014398509481986', 'f paused 18014398509481988'])
    })

    it('at 2^63 - 1 no next version fits: refused saying so, nothing written', async () => {
      const before = await table()
      const outcome = await write('d', '9223372036854775807')
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', /nothing was written: record "d" is at version 9223372036854775807, which no write can be made conditional on and advance.*2\^63 - 1/)
      assert.deepEqual(await table(), before)
    })
  })
}
