import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine } from '../connectors/sql/support/engine.js'

/**
 * `warrant check` reported an action `set: {amount: 0.125}` over a numeric(12,2) column as writing safely, while the
 * database rounds it to 0.13 (and every plan of it is now refused: test/plans/number-over-decimal-columns.test.ts).
 * A literal number the column would round or refuse is reported (fails_closed, naming the action, field, value and
 * column); 0.12 holds. SQLite keeps any number as written, so it is not judged there.
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`warrant check on ${kind}: an action setting a number field over a decimal column`, () => {
    let engine: Engine
    const connectors: SqlConnector[] = []
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table things (id varchar(20) primary key, amount decimal(12,2), version integer not null)')
    })
    after(async () => {
      await Promise.all(connectors.map((c) => c.close()))
      await engine?.drop()
    })
    const writes = async (set: Record<string, unknown>) => {
      const config = resourceSchema.parse({
        environment: { name: 'test' },
        connector: { kind: 'sql', url: engine.url, table: 'things', source: 'things-db' },
        fields: { id: 'string', amount: 'number', version: 'integer' },
        version_field: 'version',
        review_fields: ['id', 'amount'],
        actions: { reprice: { set } },
      })
      const connector = createSqlConnector({ resource: config })
      connectors.push(connector)
      return (await checkResource({ name: 'things', config, connector })).guarantees.find((g) => g.name === 'conditional_writes')
    }

    test('a literal 0.125: conditional_writes fails closed, naming the action, the field, the value and the column', async () => {
      const guarantee = await writes({ amount: 0.125 })
      assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
      assert.match(guarantee?.detail ?? '', /action "reprice" sets "amount" to 0\.125 where column "amount" of table things is (numeric|decimal)\(12,2\), which keeps only numbers with at most 2 digit\(s\) after the point.*\(writes are refused\)/)
      assert.deepEqual(guarantee?.config_keys, ['actions.reprice.set.amount'])
    })

    test('a literal 0.12: conditional_writes holds', async () => {
      assert.equal((await writes({ amount: 0.12 }))?.status, 'holds')
    })
  })
}
