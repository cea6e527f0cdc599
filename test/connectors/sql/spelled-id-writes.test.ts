import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * An id column whose engine comparison is not JavaScript's (SQLite COLLATE NOCASE, PostgreSQL citext, a MySQL/MariaDB
 * case-insensitive PAD SPACE collation, each under the primary key): the table holds "A", and a write names "a"
 * (a record deleted since the selection froze, whose id the table now stores as "A"). `UPDATE … WHERE id = 'a'`
 * matched the row "A" and the write was answered `written`, the record of another id in hand: the executor
 * judged that record, found the approved values, and reported the target succeeded, while a row no reviewer
 * named had been changed. A write addresses the row whose id is the target's exactly, as a record shows it.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const TABLE: Record<Kind, string[]> = {
  sqlite: ['create table keyed (id text collate nocase primary key, status text, version integer not null)'],
  postgres: ['create extension if not exists citext', 'create table keyed (id citext primary key, status text, version integer not null)'],
  mysql: ['create table keyed (id varchar(20) collate utf8mb4_general_ci primary key, status varchar(20), version integer not null) engine=InnoDB'],
}
const ACTIVE = { status: 'active' }

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[]) {
  describe(`sql on ${kind}: a write to an id the engine finds under another spelling`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      for (const statement of TABLE[kind]) await engine.exec(statement)
    })
    after(() => engine?.drop())

    const reset = async () => {
      await engine.exec('delete from keyed')
      await engine.exec("insert into keyed values ('A', 'active', 1), ('b', 'active', 1), ('x', 'active', 1)")
    }
    const rows = async () => (await engine.rows('select id, status, version from keyed order by id')).map((r) => `${r.id}:${r.status}:${r.version}`)

    it('a single write to "a" writes nothing and says the record is missing, naming the stored "A"', async () => {
      await reset()
      const outcome = await engine.connector('keyed', FIELDS).write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
      assert.equal(outcome.kind, 'conflict', JSON.stringify(outcome))
      assert.equal(outcome.kind === 'conflict' ? outcome.reason : '', 'missing', JSON.stringify(outcome))
      assert.match(outcome.kind === 'conflict' ? outcome.message : '', /stored as "A"/)
      assert.deepEqual(await rows(), ['A:active:1', 'b:active:1', 'x:active:1'])
    })

    if (kind === 'mysql')
      it('a single write to "x " (a trailing space PAD SPACE ignores) writes nothing', async () => {
        await reset()
        const outcome = await engine.connector('keyed', FIELDS).write({ id: 'x ', expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
        assert.notEqual(outcome.kind, 'written', JSON.stringify(outcome))
        assert.deepEqual(await rows(), ['A:active:1', 'b:active:1', 'x:active:1'])
      })

    it('the id as stored is written as before', async () => {
      await reset()
      const outcome = await engine.connector('keyed', FIELDS).write({ id: 'A', expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      assert.deepEqual(await rows(), ['A:cancelled:2', 'b:active:1', 'x:active:1'])
    })

    if (kind !== 'mysql')
      it('a window of "a" and "b" writes "b" only; "a" is missing', async () => {
        await reset()
        const outcomes = await engine.connector('keyed', FIELDS).writeWindow!(['a', 'b'].map((id) => ({ id, expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })))
        assert.equal(outcomes[0]!.kind, 'conflict', JSON.stringify(outcomes[0]))
        assert.equal(outcomes[1]!.kind, 'written', JSON.stringify(outcomes[1]))
        assert.deepEqual(await rows(), ['A:active:1', 'b:cancelled:2', 'x:active:1'])
      })
  })
}

// Ids the collation calls equal, both stored under a key that is not unique: each is its own record (a walk reads both
// in one page), and a write to one reads back and changes that one only.
for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[]) {
  describe(`sql on ${kind}: a write to one of two ids the collation calls equal`, () => {
    let engine: Engine
    before(async () => {
      engine = await createEngine(kind)
      const column = { sqlite: 'text collate nocase', postgres: 'citext', mysql: 'varchar(20) collate utf8mb4_general_ci' }[kind]
      if (kind === 'postgres') await engine.exec('create extension if not exists citext')
      await engine.exec(`create table twins (id ${column}, status varchar(20), version integer not null)${kind === 'mysql' ? ' engine=InnoDB' : ''}`)
      await engine.exec("insert into twins values ('a', 'active', 1), ('A', 'active', 1)")
    })
    after(() => engine?.drop())

    it('"a" is written, "A" is not', async () => {
      const outcome = await engine.connector('twins', FIELDS).write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      const rows = (await engine.rows('select id, status, version from twins')).map((r) => `${r.id}:${r.status}:${r.version}`).sort()
      assert.deepEqual(rows, ['A:active:1', 'a:cancelled:2'])
    })
  })
}

// A SQLite key column of no type keeps the integer 1 beside the text '1' (both show as "1"; a walk says the id is not
// unique). Compared as text, a write to "1" matched both rows and wrote the one it was not sent for too.
describe('sql on sqlite: a key column of no type holding 1 and \'1\'', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
    await engine.exec("create table untyped (id primary key, status text, version integer not null); insert into untyped values (1, 'active', 1), ('1', 'active', 1)")
  })
  after(() => engine?.drop())

  it('a write to "1" writes one row at the most', async () => {
    const outcome = await engine.connector('untyped', FIELDS).write({ id: '1', expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
    const written = (await engine.rows("select count(*) as n from untyped where status = 'cancelled'"))[0]!.n
    assert.ok(Number(written) <= 1, `${written} rows written: ${JSON.stringify(outcome)}`)
  })
})

// A PostgreSQL uuid id reads back in lower case; the same uuid in capitals is the same value to the engine, another id
// to every record, selection and plan.
describe('sql on postgres: a write to a uuid id spelled in capitals', () => {
  let engine: Engine
  const id = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create table keyed (id uuid primary key, status text, version integer not null)')
  })
  const reset = () => engine.exec(`delete from keyed; insert into keyed values ('${id}', 'active', 1)`)
  after(() => engine?.drop())

  it('writes nothing and says the record is missing', async () => {
    await reset()
    const outcome = await engine.connector('keyed', FIELDS).write({ id: id.toUpperCase(), expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
    assert.equal(outcome.kind === 'conflict' ? outcome.reason : outcome.kind, 'missing', JSON.stringify(outcome))
    assert.deepEqual((await engine.rows('select status, version from keyed')).map((r) => `${r.status}:${r.version}`), ['active:1'])
  })

  it('the uuid as it reads is written as before', async () => {
    await reset()
    const outcome = await engine.connector('keyed', FIELDS).write({ id, expectedVersion: '1', set: { status: 'cancelled' }, precondition: ACTIVE })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
  })
})
