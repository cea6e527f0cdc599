import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import { resourceSchema } from '../../../src/config/index.js'
import type { WriteOutcome } from '../../../src/connectors/connector.js'
import { createSqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'
import { startSessionInitProxy, type SessionInitProxy } from './support/session-init-proxy.js'

/**
 * MariaDB sessions that take no writes: each connection of the connector's made read-only by the session's own
 * `SET SESSION TRANSACTION READ ONLY` (as a server's init_connect or a pooling proxy can; the shared server's global
 * read_only is never touched), run by a loopback proxy before the connection's first command. The UPDATE is answered
 * 1792 (SQLSTATE 25006), which the connector took for `unknown`, as if the write might have landed, and `warrant
 * check` said conditional_writes holds. Like PostgreSQL's 25006: unauthorized (the operation halts), nothing written,
 * naming the error and the fix; and the check fails closed, naming the setting.
 */
const FIELDS = { id: 'string', version: 'integer', name: 'string' }
const messageOf = (outcome: WriteOutcome) => ('message' in outcome ? outcome.message : '')

describe('sql on MariaDB: a session that takes no writes (1792)', () => {
  let engine: Engine
  let proxy: SessionInitProxy
  let readOnlyUrl = ''
  before(async () => {
    engine = await createEngine('mysql')
    await engine.exec('create table things (id varchar(32) primary key, version integer not null, name varchar(32)) engine=InnoDB')
    await engine.exec("insert into things values ('a', 1, 'before')")
    const url = new URL(engine.url)
    proxy = await startSessionInitProxy({ host: url.hostname, port: Number(url.port) }, 'SET SESSION TRANSACTION READ ONLY')
    url.port = String(proxy.port)
    readOnlyUrl = url.toString()
  })
  after(async () => {
    await engine?.drop()
    await proxy?.close()
  })
  const resource = (url: string) =>
    resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url, table: 'things', source: 'things-db' },
      fields: FIELDS,
      version_field: 'version',
      review_fields: ['id'],
      actions: { rename: { set: { name: 'x' } } },
    })

  it('the UPDATE is refused: unauthorized (which halts), naming 1792 and the fix; nothing written', async () => {
    const connector = createSqlConnector({ resource: resource(readOnlyUrl) })
    try {
      const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { name: 'after' }, precondition: {} })
      assert.ok(proxy.answers.length > 0 && proxy.answers.every((a) => a === 0x00), `the session was set read-only: ${JSON.stringify(proxy.answers)}`)
      assert.equal(outcome.kind, 'unauthorized', JSON.stringify(outcome))
      assert.match(messageOf(outcome), /READ ONLY transaction.*1792.*read-only.*nothing was written.*read-write/is)
    } finally {
      await connector.close()
    }
    assert.deepEqual(await engine.rows("select version, name from things where id = 'a'"), [{ version: 1, name: 'before' }])
  })

  it('warrant check: conditional_writes fails closed on the read-only session, and holds on a writable one', async () => {
    const config = resource(readOnlyUrl)
    const connector = createSqlConnector({ resource: config })
    try {
      const writes = (await checkResource({ name: 'readonly', config, connector })).guarantees.find((g) => g.name === 'conditional_writes')
      assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
      assert.match(writes.detail, /takes no writes.*read-only.*1792/)
    } finally {
      await connector.close()
    }
    const writableConfig = resource(engine.url)
    const writable = createSqlConnector({ resource: writableConfig })
    try {
      const writes = (await checkResource({ name: 'readonly', config: writableConfig, connector: writable })).guarantees.find((g) => g.name === 'conditional_writes')
      assert.equal(writes?.status, 'holds', JSON.stringify(writes))
    } finally {
      await writable.close()
    }
  })
})
