import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine } from '../connectors/sql/support/engine.js'

/**
 * `warrant check --write-probe` on a sql resource: the stale write is refused, and what that does not prove is said
 * as it is for sql. It said "Not probed: that the version moves on every write … an operation halts at its first
 * target whose version did not move", an http upstream's case: a sql write moves the version column itself and is
 * never reported written when it did not move, while what no probe can see, and what `version_field` naming a
 * business column (`status`) breaks, is whether the table's other writers move the column too.
 */
describe('warrant check --write-probe on a sql table (SQLite)', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
    await engine.exec("create table things (id text primary key, status text, name text, version integer not null); insert into things values ('a', 'active', 'A', 1)")
  })
  after(() => engine?.drop())

  test('the stale write is refused; the detail names the version column and that other writers must move it', async () => {
    const config = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: engine.url, table: 'things', source: 'things-db' },
      fields: { id: 'string', status: 'string', name: 'string', version: 'integer' },
      version_field: 'version',
      review_fields: ['id', 'status'],
      actions: { rename: { set: { name: 'B' } } },
    })
    const connector = createSqlConnector({ resource: config })
    try {
      const report = await checkResource({ name: 'things', config, connector, writeProbeId: 'a' })
      const probe = report.guarantees.find((g) => g.name === 'write_probe.rename')!
      assert.equal(probe.status, 'holds', JSON.stringify(probe))
      assert.doesNotMatch(probe.detail, /an operation halts at its first target/)
      assert.match(probe.detail, /moves "version" itself/)
      assert.match(probe.detail, /every other writer of the table moves "version"/)
      assert.deepEqual(probe.config_keys, ['version_field'])
      const writes = report.guarantees.find((g) => g.name === 'conditional_writes')!
      assert.match(writes.detail, /only where that writer moves version too/)
      assert.deepEqual(await engine.rows('select name, version from things'), [{ name: 'A', version: 1 }])
    } finally {
      await connector.close()
    }
  })
})
