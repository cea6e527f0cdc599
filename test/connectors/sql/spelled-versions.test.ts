import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A string version column whose engine comparison ignores case or trailing spaces (SQLite COLLATE NOCASE,
 * PostgreSQL citext, a MySQL/MariaDB case-insensitive PAD SPACE collation). The selection froze version "abc";
 * another writer then moved the row to "ABC" (a hash, a token of another system: a new version). `WHERE version =
 * 'abc'` still matched, and the write overwrote that change unseen, reported `written`. A version compares exactly.
 */
const FIELDS = { id: 'string', status: 'string', version: 'string' }
const COLUMN: Record<Kind, string> = { sqlite: 'text collate nocase', postgres: 'citext', mysql: 'varchar(40) collate utf8mb4_general_ci' }

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[]) {
  describe(`sql on ${kind}: a string version another writer moved to another spelling`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      if (kind === 'postgres') await engine.exec('create extension if not exists citext')
      await engine.exec(`create table spelled (id varchar(20) primary key, status varchar(20), version ${COLUMN[kind]} not null)${kind === 'mysql' ? ' engine=InnoDB' : ''}`)
    })
    after(() => engine?.drop())

    for (const [stored, expected] of [['ABC', 'abc'], ...(kind === 'mysql' ? [['abc', 'abc ']] : [])] as [string, string][])
      it(`a write expecting "${expected}" is not made on a row at "${stored}"`, async () => {
        await engine.exec('delete from spelled')
        await engine.exec(`insert into spelled values ('r', 'active', '${stored}')`)
        const outcome = await engine.connector('spelled', FIELDS).write({ id: 'r', expectedVersion: expected, set: { status: 'cancelled' }, precondition: { status: 'active' } })
        assert.equal(outcome.kind === 'conflict' ? outcome.reason : outcome.kind, 'version_changed', JSON.stringify(outcome))
        assert.deepEqual((await engine.rows('select status from spelled')).map((r) => r.status), ['active'])
      })

    it('a write expecting the version as stored is made', async () => {
      await engine.exec('delete from spelled')
      await engine.exec("insert into spelled values ('r', 'active', 'ABC')")
      const outcome = await engine.connector('spelled', FIELDS).write({ id: 'r', expectedVersion: 'ABC', set: { status: 'cancelled' }, precondition: { status: 'active' } })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    })
  })
}
