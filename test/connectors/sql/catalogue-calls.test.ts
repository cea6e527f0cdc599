import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { UpstreamCall } from '../../../src/connectors/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * What the connector reads of the database's catalogue (the columns and their types, the UPDATE triggers, the table
 * facts: keys, engine, row security, views) are statements that reach the upstream like any other, and reached it
 * with no call: the audit log, which holds every upstream call, showed a walk's session and pages, never the three
 * statements before them. Each is now a call, named by what it reads (`catalogue: … of table T`), never a value.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const TABLE: Record<Kind, string> = {
  sqlite: 'create table listed (id text primary key, status text, version integer not null)',
  postgres: 'create table listed (id text primary key, status text, version integer not null)',
  mysql: 'create table listed (id varchar(20) primary key, status varchar(20), version integer not null) engine=InnoDB',
}
const CATALOGUE = ['catalogue: columns of table listed', 'catalogue: table facts of table listed', 'catalogue: update triggers of table listed']

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[])
describe(`sql on ${kind}: every statement reading the catalogue is a call`, () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine(kind)
    await engine.exec(TABLE[kind])
    await engine.exec("insert into listed values ('a', 'active', 1), ('b', 'paused', 1)")
  })
  after(() => engine?.drop())

  it('a walk: its catalogue reads, the session and the page are calls (was: the session and the page only)', async () => {
    const calls: UpstreamCall[] = []
    const connector = engine.connector('listed', FIELDS, {}, { onCall: (call) => calls.push(call) })
    try {
      const session = await connector.openSession()
      const page = await session.readPage({ source: connector.source, filter: {}, position: null, pageSize: 10 })
      assert.equal(page.kind, 'page')
      await session.close()
      const catalogue = calls.filter((c) => c.endpoint.startsWith('catalogue'))
      assert.deepEqual(catalogue.map((c) => c.endpoint).sort(), CATALOGUE)
      assert.ok(catalogue.every((c) => c.method === 'SELECT' && c.outcome === 'ok' && c.source === connector.source && c.durationMs >= 0 && c.targetId === undefined))
      assert.deepEqual(calls.filter((c) => !c.endpoint.startsWith('catalogue')).map((c) => [c.endpoint, c.outcome]), [
        ['table listed', 'session_opened'],
        ['table listed', 'ok'],
        // SQLite's first page also counts the rows whose id is NULL or a blob: a statement, so a call of its own
        ...(kind === 'sqlite' ? [['table listed', 'ok']] : []),
      ])
    } finally {
      await connector.close()
    }
  })

  it('facts kept within their age add no read, and no call: a read by id after a walk', async () => {
    const calls: UpstreamCall[] = []
    const connector = engine.connector('listed', FIELDS, {}, { onCall: (call) => calls.push(call), catalogueMaxAgeMs: 60_000 })
    try {
      await connector.refreshFacts!()
      assert.equal(calls.length, 3)
      await connector.readByIds(['a'])
      assert.deepEqual(calls.slice(3).map((c) => [c.endpoint, c.targetId]), [['table listed', 'a']])
    } finally {
      await connector.close()
    }
  })
})
