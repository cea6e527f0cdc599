import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from '../connectors/sql/support/engine.js'

/**
 * `warrant check` judged an action's `set` only by the field's declared type against the column's, so an action
 * `set: {code: "abc"}` on a string field over an integer column was reported as writing safely, while every plan of
 * it is refused (test/plans/string-over-typed-columns.test.ts). A literal value the column would not keep as written
 * is now reported (fails_closed, naming the action, the field, the value and the column); a template is judged only
 * at proposal, with its parameters, and "42" holds.
 */
const COLUMN: Record<Kind, { column: string; shown: string }> = {
  sqlite: { column: 'INTEGER', shown: 'INTEGER' },
  postgres: { column: 'integer', shown: 'integer' },
  mysql: { column: 'int', shown: 'int' },
}

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  describe(`warrant check on ${kind}: an action setting a string field over an integer column`, () => {
    let engine: Engine
    const connectors: SqlConnector[] = []
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id varchar(20) primary key, code ${COLUMN[kind].column}, version integer not null)`)
    })
    after(async () => {
      await Promise.all(connectors.map((c) => c.close()))
      await engine?.drop()
    })
    const writes = async (set: Record<string, unknown>, params: Record<string, unknown> = {}) => {
      const config = resourceSchema.parse({
        environment: { name: 'test' },
        connector: { kind: 'sql', url: engine.url, table: 'things', source: 'things-db' },
        fields: { id: 'string', code: 'string', version: 'integer' },
        version_field: 'version',
        review_fields: ['id', 'code'],
        actions: { recode: { set, params } },
      })
      const connector = createSqlConnector({ resource: config })
      connectors.push(connector)
      return (await checkResource({ name: 'things', config, connector })).guarantees.find((g) => g.name === 'conditional_writes')
    }

    test('a literal "abc": conditional_writes fails closed, naming the action, the field, the value and the column', async () => {
      const guarantee = await writes({ code: 'abc' })
      assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
      assert.match(guarantee?.detail ?? '', new RegExp(`action "recode" sets "code" to "abc" where field "code" is declared string, but column "code" of table things is ${COLUMN[kind].shown}, which keeps .*\\(writes are refused\\)`))
      assert.deepEqual(guarantee?.config_keys, ['actions.recode.set.code'])
    })

    test('a literal "42", and a template (judged at proposal, with its parameter): conditional_writes holds', async () => {
      assert.equal((await writes({ code: '42' }))?.status, 'holds')
      assert.equal((await writes({ code: '{{params.code}}' }, { code: { type: 'string' } }))?.status, 'holds')
    })
  })
}
