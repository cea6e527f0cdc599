import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource, type CheckReport } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from '../connectors/sql/support/engine.js'

/**
 * `warrant check` on a `sql` resource whose config does not match its table. The advice named the http
 * connector's keys (`connector.sources`, `connector.list`, `connector.get`), which a sql resource cannot have:
 * an operator told to fix `connector.list` had nothing to fix. Each guarantee that fails names the line of a
 * sql resource that is wrong: the table, the declared field the table lacks, the id field.
 */
const SQL_CONNECTOR_KEYS = new Set(['connector.url', 'connector.table', 'connector.source', 'connector.password', 'connector.write_window'])
const TOP_LEVEL = /^(id_field|version_field|review_fields|fields\.[a-z_]+|actions\.[a-z_]+(\..+)?)$/

function keysOf(report: CheckReport): string[] {
  return report.guarantees.flatMap((g) => g.config_keys)
}

for (const kind of ['sqlite', 'postgres'] as Kind[])
  describe(`warrant check on a ${kind} table its sql config does not match`, () => {
    let engine: Engine
    const connectors: SqlConnector[] = []
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec('create table things (id text primary key, status text, version integer not null)')
      await engine.exec("insert into things values ('a', 'active', 1), ('b', 'active', 1)")
      await engine.exec('create view twice as select id, status, version from things union all select id, status, version from things')
    })
    after(async () => {
      await Promise.all(connectors.map((c) => c.close()))
      await engine?.drop()
    })
    const check = (table: string, fields: Record<string, string>) => {
      const config = resourceSchema.parse({
        environment: { name: 'test' },
        connector: { kind: 'sql', url: engine.url, table, source: 'things-db' },
        fields,
        version_field: 'version',
        review_fields: ['id'],
        actions: { pause: { set: { status: 'paused' }, precondition: {} } },
      })
      const connector = createSqlConnector({ resource: config })
      connectors.push(connector)
      return checkResource({ name: table, config, connector })
    }
    const pagesRead = (report: CheckReport) => report.guarantees.find((g) => g.name === 'pages_read')!

    const cases: [string, string, Record<string, string>, string][] = [
      ['a table that does not exist', 'nosuch', { id: 'string', status: 'string', version: 'integer' }, 'connector.table'],
      ['a declared field the table has no column for', 'things', { id: 'string', status: 'string', owner: 'string', version: 'integer' }, 'fields.owner'],
      ['an id column two rows share', 'twice', { id: 'string', status: 'string', version: 'integer' }, 'id_field'],
    ]
    for (const [what, table, fields, key] of cases)
      test(`${what}: pages_read fails closed naming ${key}, and no advice names a key a sql resource cannot have`, async () => {
        const report = await check(table, fields)
        const reads = pagesRead(report)
        assert.equal(reads.status, 'fails_closed', JSON.stringify(reads))
        assert.deepEqual(reads.config_keys, [key], JSON.stringify(reads))
        for (const k of keysOf(report)) assert.ok(SQL_CONNECTOR_KEYS.has(k) || TOP_LEVEL.test(k), `advice names "${k}", which no sql resource has: ${JSON.stringify(report.guarantees.filter((g) => g.config_keys.includes(k)))}`)
      })
  })
