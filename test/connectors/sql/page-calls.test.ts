import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { UpstreamCall } from '../../../src/connectors/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A read page may run more statements than its page query: the count of the filter's rows without an id (a walk's
 * first page, where the id may be NULL, and always on SQLite, whose id column may keep a blob) and, over an id no
 * key proves unique, the count of the rows sharing the page's last id. Each reaches the upstream like any other,
 * and all of them were one call: the audit log, which holds every upstream call, showed one SELECT where the
 * upstream ran three. Each statement is now a call of its own, with its own outcome and duration.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
// no key: the id is neither proven unique nor proven present
const TABLE: Record<Kind, string> = {
  sqlite: 'create table loose (id text, status text, version integer not null)',
  postgres: 'create table loose (id text, status text, version integer not null)',
  mysql: 'create table loose (id varchar(20), status varchar(20), version integer not null) engine=InnoDB',
}

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[])
  describe(`sql on ${kind}: every statement of a read page is a call`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(TABLE[kind])
      await engine.exec("insert into loose values ('a', 'active', 1), ('b', 'active', 1), ('c', 'active', 1)")
    })
    after(() => engine?.drop())

    it('the page query, the count of rows without an id and the count of its last id are three calls (was: one)', async () => {
      const calls: UpstreamCall[] = []
      const connector = engine.connector('loose', FIELDS, {}, { onCall: (call) => calls.push(call) })
      try {
        const session = await connector.openSession()
        const first = await session.readPage({ source: connector.source, filter: { status: 'active' }, position: null, pageSize: 1 })
        assert.equal(first.kind, 'page', JSON.stringify(first))
        await session.close()
        const page = calls.filter((c) => !c.endpoint.startsWith('catalogue') && c.outcome !== 'session_opened')
        assert.deepEqual(page.map((c) => [c.method, c.endpoint, c.outcome]), [
          ['SELECT', 'table loose', 'ok'],
          ['SELECT', 'table loose', 'ok'],
          ['SELECT', 'table loose', 'ok'],
        ])
        assert.ok(page.every((c) => c.durationMs >= 0 && c.targetId === undefined))
      } finally {
        await connector.close()
      }
    })
  })
