import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { assertColumnsFit } from '../../../src/plans/set-types.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A uuid column reads "A0EEBC99-9C0B-…" or "{a0eebc999c0b…}" and sends back its own spelling, lowercase and hyphenated:
 * a string field set so was answered "written" with a record showing another value than approved. Such a string is
 * now refused at proposal and before anything is sent, naming the column and the spelling it keeps; the database's
 * own spelling is written.
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a string set into a uuid column`, () => {
    let engine: Engine
    let connector: SqlConnector
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table things (id varchar(10) primary key, version integer not null, u uuid)')
      await engine.exec("insert into things (id, version) values ('a', 1)")
      connector = engine.connector('things', { id: 'string', version: 'integer', u: 'string' })
    })
    after(async () => void (await engine?.drop()))

    for (const value of ['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', 'a0eebc999c0b4ef8bb6d6bb9bd380a11']) {
      it(`${value}: refused at proposal and before anything is sent`, async () => {
        const keeps = /where field "u" is declared string, but column "u" of table things is uuid, which keeps a string as written only when it is a uuid in lowercase hex, hyphenated 8-4-4-4-12/
        const strings = await connector.stringColumns!()
        assert.throws(() => assertColumnsFit('tag', [], { u: value }, strings, []), (error: any) => error.code === 'invalid_request' && keeps.test(error.message))
        await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { u: value }, precondition: {} }), (error: any) => keeps.test(error.message) && /nothing was written/.test(error.message))
        assert.deepEqual(await engine.rows("select version from things where id = 'a'"), [{ version: 1 }])
      })
    }

    it('the database\'s own spelling is written and read back as set', async () => {
      const written = await connector.write({ id: 'a', expectedVersion: '1', set: { u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' }, precondition: {} })
      assert.equal(written.kind === 'written' && written.record!.fields.u, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', JSON.stringify(written))
    })
  })
}
