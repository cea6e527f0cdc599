import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine } from '../connectors/sql/support/engine.js'

// A version column keeping microseconds (MariaDB TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)) is read, shown and
// compared by Warrant to the millisecond (versionCondition: `v >= ms and v < ms + 1`). Seen on the MariaDB walk: a
// row frozen at 21:00:00.500100, changed by another writer (stage 'lead' → 'Won') at 21:00:00.500900, was written
// and reported succeeded, the change no reviewer saw kept under the approved one. `warrant check` said the database
// enforces the version; it must say where it does not, and what to do.
describe('warrant check on MariaDB: a version column finer than a millisecond', () => {
  let engine: Engine
  const connectors: SqlConnector[] = []
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table micro (id varchar(20) primary key, owner varchar(20), version timestamp(6) not null default current_timestamp(6) on update current_timestamp(6))')
    await engine.exec('create table milli (id varchar(20) primary key, owner varchar(20), version timestamp(3) not null default current_timestamp(3) on update current_timestamp(3))')
    await engine.exec("insert into micro (id, owner) values ('a', 'x')")
    await engine.exec("insert into milli (id, owner) values ('a', 'x')")
  })
  after(async () => {
    await Promise.all(connectors.map((c) => c.close()))
    await engine?.drop()
  })
  const check = (table: string) => {
    const config = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: engine.url, table, source: 'db' },
      fields: { id: 'string', owner: 'string', version: 'timestamp' },
      version_field: 'version',
      review_fields: ['id', 'owner'],
      actions: { reassign: { set: { owner: 'y' } } },
    })
    const connector = createSqlConnector({ resource: config })
    connectors.push(connector)
    return checkResource({ name: table, config, connector })
  }

  test('TIMESTAMP(6): conditional_writes is a warning naming the millisecond comparison and the fix', async () => {
    const writes = (await check('micro')).guarantees.find((g) => g.name === 'conditional_writes')
    assert.equal(writes?.status, 'warning', JSON.stringify(writes))
    assert.match(writes?.detail ?? '', /"version" keeps 6 digits of a second.*to the millisecond.*not seen.*integer version/)
    assert.deepEqual(writes?.config_keys, ['version_field'])
  })

  test('TIMESTAMP(3): conditional_writes holds', async () => {
    const writes = (await check('milli')).guarantees.find((g) => g.name === 'conditional_writes')
    assert.equal(writes?.status, 'holds', JSON.stringify(writes))
  })
})
