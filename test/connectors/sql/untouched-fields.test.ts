import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import type { WriteRequest } from '../../../src/connectors/connector.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * On PostgreSQL and SQLite a write whose UPDATE moved a field outside the action's set (a trigger rewriting a column,
 * a generated column over a set one) was committed: RETURNING autocommitted, or the trigger's transaction committed
 * without judging it, and the executor halted only after the unapproved value was in the table. As on MySQL
 * (mysql-untouched-fields.test.ts), such a field, held otherwise than the record re-read before the write (`current`),
 * now refuses the write before COMMIT, naming it: rolled back, nothing written. For one write and for a window.
 */
const TABLES = {
  postgres: [
    `create table things (id text primary key, version integer not null, status text not null, note text,
       amount numeric(10,3) not null, twice numeric(12,3) generated always as (amount * 2) stored)`,
    `create function shout() returns trigger language plpgsql as $$
       begin if new.status = 'closed' then new.note := upper(new.note); end if; return new; end $$`,
    'create trigger shout before update on things for each row execute function shout()',
    `create table sums (id text primary key, version integer not null, amount numeric(10,3) not null,
       twice numeric(12,3) generated always as (amount * 2) stored, note text)`,
  ],
  sqlite: [
    `create table things (id text primary key, version integer not null, status text not null, note text,
       amount real not null, twice real generated always as (amount * 2) stored)`,
    `create trigger shout after update of status on things when new.status = 'closed'
       begin update things set note = upper(note) where id = new.id; end`,
    `create table sums (id text primary key, version integer not null, amount real not null,
       twice real generated always as (amount * 2) virtual, note text)`,
  ],
} as const

for (const kind of ['postgres', 'sqlite'] as const) {
  describe(`sql on ${kind}: a write that changes a field outside its set`, () => {
    let engine: Engine
    let things: SqlConnector
    let sums: SqlConnector
    before(async () => {
      engine = await createEngine(kind)
      for (const statement of TABLES[kind]) await engine.exec(statement)
      for (const id of ['t1', 't2', 't3', 't4', 't5', 't6']) await engine.exec(`insert into things (id, version, status, note, amount) values ('${id}', 1, 'open', 'quiet', 1.5)`)
      for (const id of ['s1', 's2', 's3', 's4', 's5']) await engine.exec(`insert into sums (id, version, amount, note) values ('${id}', 1, 1.5, 'quiet')`)
      things = engine.connector('things', { id: 'string', version: 'integer', status: 'string', note: 'string', amount: 'number', twice: 'number' })
      sums = engine.connector('sums', { id: 'string', version: 'integer', amount: 'number', twice: 'number', note: 'string' })
    })
    after(async () => {
      await engine?.drop()
    })

    const request = async (connector: SqlConnector, id: string, set: Record<string, unknown>, more: Partial<WriteRequest> = {}): Promise<WriteRequest> => {
      const read = await connector.readByIds([id])
      const current = read.records.get(id)
      assert.ok(current, JSON.stringify(read))
      return { id, expectedVersion: '1', set, precondition: {}, current, ...more }
    }
    const refusedNaming = (outcome: unknown, field: string) => {
      const o = outcome as { kind: string; message?: string }
      assert.equal(o.kind, 'rejected', JSON.stringify(outcome))
      assert.match(o.message ?? '', new RegExp(`changed "${field}", which the action does not set`), JSON.stringify(outcome))
      assert.match(o.message ?? '', /nothing was written/, JSON.stringify(outcome))
    }
    const row = async (table: string, id: string) => {
      const [r] = await engine.rows(`select version, note, cast(amount as text) as amount from ${table} where id = '${id}'`)
      return { ...r, version: Number(r!.version) }
    }

    it('a trigger rewriting an unset column: refused and rolled back, naming the field', async () => {
      refusedNaming(await things.write(await request(things, 't1', { status: 'closed' })), 'note')
      assert.deepEqual(await engine.rows(`select version, status, note from things where id = 't1'`).then((r) => r.map((x) => ({ ...x, version: Number(x.version) }))), [{ version: 1, status: 'open', note: 'quiet' }])
    })

    it('a generated column over a set column (table with a trigger): refused and rolled back, naming the field', async () => {
      refusedNaming(await things.write(await request(things, 't2', { amount: 2.5 })), 'twice')
      assert.equal((await row('things', 't2')).version, 1)
    })

    it('a generated column over a set column (table without a trigger): refused and rolled back, naming the field', async () => {
      refusedNaming(await sums.write(await request(sums, 's1', { amount: 2.5 })), 'twice')
      assert.deepEqual(await row('sums', 's1'), { version: 1, note: 'quiet', amount: kind === 'postgres' ? '1.500' : '1.5' })
    })

    it('a window: the targets that moved an unset field are refused, nothing of them written; the others written', async () => {
      const outcomes = await things.writeWindow!([await request(things, 't3', { status: 'closed' }), await request(things, 't4', { status: 'closed' })])
      for (const outcome of outcomes) refusedNaming(outcome, 'note')
      for (const id of ['t3', 't4']) assert.deepEqual(await row('things', id), { version: 1, note: 'quiet', amount: kind === 'postgres' ? '1.500' : '1.5' })
      const generated = await sums.writeWindow!([await request(sums, 's2', { amount: 2.5 }), await request(sums, 's3', { amount: 2.5 })])
      for (const outcome of generated) refusedNaming(outcome, 'twice')
      for (const id of ['s2', 's3']) assert.equal((await row('sums', id)).version, 1)
    })

    it('a write that leaves every other field as it was is written, alone and in a window', async () => {
      assert.equal((await sums.write(await request(sums, 's4', { note: 'calm' }))).kind, 'written')
      assert.deepEqual(await row('sums', 's4'), { version: 2, note: 'calm', amount: kind === 'postgres' ? '1.500' : '1.5' })
      const outcomes = await things.writeWindow!([await request(things, 't5', { note: 'calm' }), await request(things, 't6', { note: 'calm' })])
      assert.deepEqual(outcomes.map((o) => o.kind), ['written', 'written'], JSON.stringify(outcomes))
    })

    it("a field the plan lets the write change (the action's write.may_change) is not judged", async () => {
      const outcome = await sums.write(await request(sums, 's5', { amount: 3 }, { mayChange: ['amount', 'version', 'twice'] }))
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      assert.equal((await row('sums', 's5')).version, 2)
    })

    it('each refusal gives its connection back: on a pool of one, refused writes one after another are each answered', async () => {
      const single = engine.connector('sums', { id: 'string', version: 'integer', amount: 'number', twice: 'number', note: 'string' }, {}, { maxConnections: 1 })
      for (let i = 0; i < 3; i++) refusedNaming(await single.write(await request(single, 's1', { amount: 4 + i })), 'twice')
      assert.equal((await single.write(await request(single, 's1', { note: 'calm' }))).kind, 'written')
    })

    it('without the record re-read before the write, nothing more is judged than before', async () => {
      const outcome = await things.write({ id: 't1', expectedVersion: '1', set: { status: 'closed' }, precondition: {} })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    })
  })
}
