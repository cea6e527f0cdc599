import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import type { UpstreamCall, WriteRequest } from '../../../src/connectors/connector.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A window whose grouped UPDATE committed, then one target written alone after it (a record without a version,
 * written alone as `writeRecord` would) whose own write throws: a migration between the two statements turned the
 * precondition's column into text, so the target's own write is refused before it is sent. The throw left
 * `writeWindow` whole, and the executor gave it to every target of the window: "a" and "b", written and committed,
 * were recorded `failed` `write_refused` "nothing was sent" (a failed target is never compensated). Each target's
 * answer is now its own: the group's targets `written`, the target alone the error its own write threw.
 */
const KINDS = ['sqlite', 'postgres'] as const
const FIELDS = { id: 'string', status: 'string', n: 'number', version: 'integer' }

for (const kind of KINDS) {
  describe(`sql writeWindow on ${kind}: one target's own write throws after the group statement committed`, () => {
    let engine: Engine
    let connector: SqlConnector
    let migrated = false
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(`create table things (id text primary key, status text, n ${kind === 'sqlite' ? 'real' : 'double precision'}, version integer)`)
      await engine.exec(`insert into things values ('a', 'active', 1, 1), ('b', 'active', 1, 1), ('c', 'active', 1, null)`)
      // the column turned into text as the group's UPDATE is reported: synchronously, before the connector goes on
      const migrate = () => {
        if (kind === 'sqlite') {
          const db = new BetterSqlite3(new URL(engine.url.replace(/^sqlite:/, 'file:')).pathname)
          try {
            db.exec(`begin; create table moved (id text primary key, status text, n text, version integer);
              insert into moved select * from things; drop table things; alter table moved rename to things; commit`)
          } finally {
            db.close()
          }
        } else {
          execFileSync('psql', [engine.url, '-q', '-c', 'alter table things alter column n type text using n::text'])
        }
        migrated = true
      }
      const onCall = (call: UpstreamCall) => {
        if (call.method === 'UPDATE' && call.window !== undefined && !migrated) migrate()
      }
      // facts read again for each write: the migration is seen by the next statement's preparation
      connector = engine.connector('things', FIELDS, {}, { onCall, catalogueMaxAgeMs: 0 })
    })
    after(async () => {
      await engine?.drop()
    })

    it('the group targets are written; the target alone has its own error', async () => {
      const request = (id: string, expectedVersion: string): WriteRequest => ({ id, expectedVersion, set: { status: 'paused' }, precondition: { n: { gte: 0 } } })
      const answers = await connector.writeWindow!([request('a', '1'), request('b', '1'), request('c', '')])
      assert.equal(migrated, true, 'the column was migrated between the statements')
      const rows = await engine.rows('select id, status, version from things order by id')
      assert.deepEqual(
        rows.map((r) => [r.id, r.status, r.version === null ? null : Number(r.version)]),
        [['a', 'paused', 2], ['b', 'paused', 2], ['c', 'active', null]],
      )
      assert.deepEqual(answers.slice(0, 2).map((a) => a.kind), ['written', 'written'], JSON.stringify(answers))
      const own = answers[2]!
      assert.equal(own.kind, 'threw', JSON.stringify(answers))
      assert.match(String(own.kind === 'threw' && (own.error as Error).message), /precondition on it would be compared by the database otherwise/)
    })
  })
}
