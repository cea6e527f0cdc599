import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource, type CheckReport } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine } from '../connectors/sql/support/engine.js'

// A MariaDB table with `touched_at TIMESTAMP ON UPDATE CURRENT_TIMESTAMP` beside an integer version, the column
// declared as a field: every UPDATE moves it, no action sets it, so the connector rolls back every write of every
// action (`the UPDATE … changed "touched_at", which the action does not set`). `warrant check` said "every
// guarantee holds" on it; the first approved operation then failed every target. It must say so before.
const FIELDS = { id: 'string', owner: 'string', version: 'integer', touched_at: 'timestamp' }
const guarantee = (report: CheckReport, name: string) => report.guarantees.find((g) => g.name === name)

describe('warrant check on a MariaDB table with an ON UPDATE column outside the version', () => {
  let engine: Engine
  const connectors: SqlConnector[] = []
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec(
      'create table deals (id varchar(20) primary key, owner varchar(20), version integer not null, touched_at timestamp(3) not null default current_timestamp(3) on update current_timestamp(3)) engine=InnoDB',
    )
    await engine.exec("insert into deals (id, owner, version) values ('D1', 'a', 1), ('d2', 'a', 1)")
  })
  after(async () => {
    await Promise.all(connectors.map((c) => c.close()))
    await engine?.drop()
  })
  const check = (fields: Record<string, string>, action: Record<string, unknown>, versionField = 'version') => {
    const config = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: engine.url, table: 'deals', source: 'deals-db' },
      fields,
      version_field: versionField,
      review_fields: ['id', 'owner'],
      actions: { reassign: action },
    })
    const connector = createSqlConnector({ resource: config })
    connectors.push(connector)
    return checkResource({ name: 'deals', config, connector })
  }

  test('an action that leaves the column out fails closed, naming the action, the column and the fix', async () => {
    const report = await check(FIELDS, { set: { owner: 'b' } })
    const writes = guarantee(report, 'conditional_writes')
    assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
    assert.match(writes?.detail ?? '', /action "reassign".*"touched_at".*ON UPDATE.*may_change/)
    assert.ok(writes?.config_keys.includes('actions.reassign'), JSON.stringify(writes))
    assert.equal(report.verdict, 'fails_closed')
  })

  test('the column named in write.may_change, set by the action, or the version: the writes hold', async () => {
    for (const [fields, action, version] of [
      [FIELDS, { set: { owner: 'b' }, write: { path: '/unused', may_change: ['touched_at'] } }, 'version'],
      [FIELDS, { set: { owner: 'b', touched_at: '2030-01-01T00:00:00.000Z' } }, 'version'],
      [{ id: 'string', owner: 'string', touched_at: 'timestamp' }, { set: { owner: 'b' } }, 'touched_at'],
      [{ id: 'string', owner: 'string', version: 'integer' }, { set: { owner: 'b' } }, 'version'],
    ] as const) {
      const writes = guarantee(await check(fields, action, version), 'conditional_writes')
      assert.equal(writes?.status, 'holds', JSON.stringify({ action, version, writes }))
    }
  })
})
