import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A PostgreSQL table with inheritance children (`create table child () inherits (parent)`): a SELECT or UPDATE of
 * the parent covers the children's rows too, while its primary key covers only its own. "a" in the parent and "a"
 * in the child were taken as proven unique: `UPDATE parent … WHERE id = 'a'` committed on its own and wrote both,
 * the child's row no reviewer approved included (answered `unknown` only afterwards), and a walk resumed after "a"
 * (`id > 'a'`, a new session) skipped the child's "a". Such an id is not proven unique: checked per page, written
 * in a transaction that reads the rows back. A partitioned table's key does cover its partitions.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }

describe('sql on postgres: a table whose inheritance children share its ids', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create table parent (id text primary key, status text, version integer not null); create table child () inherits (parent)')
    await engine.exec("insert into parent values ('a', 'active', 1), ('b', 'active', 1); insert into child values ('a', 'active', 1), ('c', 'active', 1)")
    await engine.exec('create table parted (id text primary key, status text, version integer not null) partition by range (id)')
    await engine.exec("create table parted_1 partition of parted for values from ('a') to ('m'); create table parted_2 partition of parted for values from ('m') to (maxvalue)")
  })
  after(() => engine?.drop())

  it('a write to "a" writes neither row', async () => {
    const outcome = await engine.connector('parent', FIELDS).write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: { status: 'active' } })
    assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
    assert.deepEqual((await engine.rows("select count(*)::int as n from parent where status = 'cancelled'")).map((r) => r.n), [0])
  })

  it('a walk resumed in a new session after "a" is refused, never a walk that skipped the child\'s "a"', async () => {
    const connector = engine.connector('parent', FIELDS)
    const first = await connector.openSession()
    const page = await first.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 1 })
    await first.close()
    const second = await connector.openSession()
    const next = await second.readPage({ source: 'things-db', filter: {}, position: page.kind === 'page' ? page.next : null, pageSize: 1 })
    await second.close()
    const refused = [page, next].find((r) => r.kind === 'refused')
    assert.match(refused?.kind === 'refused' ? refused.message : JSON.stringify([page, next]), /not unique/)
  })

  it("a partitioned table's key is proven unique over its partitions", async () => {
    const problems = await engine.connector('parted', FIELDS).tableProblems!()
    assert.deepEqual(problems, [])
  })
})
