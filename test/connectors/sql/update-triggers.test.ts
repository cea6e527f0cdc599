import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * A table whose UPDATE triggers change the row after the UPDATE: a rule that refuses to let a record be
 * cancelled and puts it back, one that puts the version back. SQLite's and PostgreSQL's RETURNING show the row
 * before AFTER triggers run, so a write was reported `written` with status "cancelled" (and the effect check
 * passed on that answer) while the row held "active". A write's answer is now the row as the statement left
 * it, read back in the UPDATE's transaction; a version or a set value a trigger put back is refused and rolled back.
 */
const KINDS = ['sqlite', 'postgres'] as const
const FIELDS = { id: 'string', status: 'string', version: 'integer' } as const

const TABLE = 'create table ledger (id text primary key, status text, version integer not null)'
const KEEP_ACTIVE = {
  sqlite: [
    `create trigger keep_active after update of status on ledger when new.status = 'cancelled'
       begin update ledger set status = 'active' where id = new.id; end`,
    `create trigger keep_version after update of status on ledger when new.status = 'frozen'
       begin update ledger set version = old.version where id = new.id; end`,
  ],
  postgres: [
    `create function keep_active() returns trigger language plpgsql as $$
       begin
         if pg_trigger_depth() = 1 and new.status = 'cancelled' then update ledger set status = 'active' where id = new.id; end if;
         if pg_trigger_depth() = 1 and new.status = 'frozen' then update ledger set version = old.version where id = new.id; end if;
         return null;
       end $$`,
    'create trigger keep_active after update on ledger for each row execute function keep_active()',
  ],
} as const

for (const kind of KINDS) {
  describe(`sql on ${kind}: an UPDATE trigger changes the row the write answers`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    const rows = async () => {
      const out = new Map<string, { status: string; version: number }>()
      for (const row of await readLedger(upstream)) out.set(row.id, { status: row.status, version: Number(row.version) })
      return out
    }
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(TABLE)
      for (const statement of KEEP_ACTIVE[kind]) await upstream.exec(statement)
      for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await upstream.exec('insert into ledger values (?, ?, ?)', [id, 'active', 1])
      connector = ledgerConnector(upstream.url, FIELDS)
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    // these two once expected `written`, the row as the trigger left it ("active" where "cancelled" was approved):
    // an honest answer, but a value no reviewer approved, committed. Refused before COMMIT now, as on MySQL
    it('a single write a trigger puts back is refused naming the field, both values; the row as it was', async () => {
      const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', /column "status" of record "a" would hold "active" where "cancelled" was asked.*rolled back, nothing was written/)
      assert.deepEqual((await rows()).get('a'), { status: 'active', version: 1 })
    })

    it('a window a trigger puts back: each target refused as alone, the rows as they were', async () => {
      const outcomes = await connector.writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })))
      const table = await rows()
      for (const [i, id] of ['b', 'c'].entries()) {
        const outcome = outcomes[i]!
        assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
        assert.match(outcome.kind === 'rejected' ? outcome.message : '', new RegExp(`column "status" of record "${id}" would hold "active" where "cancelled" was asked`))
        assert.deepEqual(table.get(id), { status: 'active', version: 1 })
      }
    })

    it('a write after which a trigger put the version back is refused and rolled back', async () => {
      const outcome = await connector.write({ id: 'd', expectedVersion: '1', set: { status: 'frozen' }, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', /version column "version" of record "d" did not change.*rolled back, nothing was written/)
      assert.deepEqual((await rows()).get('d'), { status: 'active', version: 1 })
      // a second writer holding version 1 is then the only one to write
      const stale = await connector.write({ id: 'd', expectedVersion: '1', set: { status: 'paused' }, precondition: {} })
      assert.equal(stale.kind, 'written', JSON.stringify(stale))
    })

    it('a window in which a trigger put a version back writes nothing of it: each record answers as alone', async () => {
      const outcomes = await connector.writeWindow!(['e', 'f'].map((id) => ({ id, expectedVersion: '1', set: { status: 'frozen' }, precondition: {} })))
      for (const outcome of outcomes) assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      const table = await rows()
      assert.deepEqual([table.get('e'), table.get('f')], [{ status: 'active', version: 1 }, { status: 'active', version: 1 }])
    })
  })
}

async function readLedger(upstream: Upstream): Promise<{ id: string; status: string; version: unknown }[]> {
  // the test upstream has no row reader of its own for another table: a connector that reads, never writes
  const reader = ledgerConnector(upstream.url, FIELDS)
  try {
    const session = await reader.openSession()
    try {
      const page = await session.readPage({ source: reader.source, filter: {}, position: null, pageSize: 100 })
      assert.equal(page.kind, 'page', JSON.stringify(page))
      return page.kind === 'page' ? page.items.map((r) => ({ id: r.id, status: String(r.fields.status), version: r.version })) : []
    } finally {
      await session.close()
    }
  } finally {
    await reader.close()
  }
}

/**
 * A trigger or rule that skips a row without an error (a PostgreSQL BEFORE UPDATE trigger returning NULL, a rule
 * DO INSTEAD NOTHING, SQLite's RAISE(IGNORE)): the UPDATE matched nothing, the row read after it was at the
 * expected version and met the precondition, and each write was answered "no longer meets the action's
 * precondition", a skip for a change nobody made, target after target. It is refused naming the trigger or rule;
 * a row that does not meet the precondition stays `precondition_failed`.
 */
const SKIP_LOCKED = {
  sqlite: ["create trigger skip_locked before update on ledger when old.status = 'locked' begin select raise(ignore); end"],
  postgres: [
    "create function skip_locked() returns trigger language plpgsql as $$ begin if old.status = 'locked' then return null; end if; return new; end $$",
    'create trigger skip_locked before update on ledger for each row execute function skip_locked()',
  ],
} as const

for (const kind of KINDS) {
  describe(`sql on ${kind}: a trigger that skips a row without an error`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(TABLE)
      await upstream.exec("insert into ledger values ('a', 'locked', 1), ('b', 'locked', 1), ('c', 'locked', 1), ('d', 'open', 1)")
      for (const statement of SKIP_LOCKED[kind]) await upstream.exec(statement)
      connector = ledgerConnector(upstream.url, FIELDS)
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a write the trigger skips is refused naming it, for one write and a window; nothing is written', async () => {
      const single = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'open' }, precondition: { status: 'locked' } })
      assert.equal(single.kind, 'rejected', JSON.stringify(single))
      assert.match(single.kind === 'rejected' ? single.message : '', /nothing was written: record "a" is at the expected version 1 and meets the precondition, so an UPDATE trigger or rule of table ledger may have skipped it/)
      const window = await connector.writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: '1', set: { status: 'open' }, precondition: {} })))
      assert.deepEqual(window.map((o) => o.kind), ['rejected', 'rejected'], JSON.stringify(window))
      const read = await connector.readByIds(['a', 'b', 'c'])
      assert.deepEqual(['a', 'b', 'c'].map((id) => [read.records.get(id)?.fields.status, read.records.get(id)?.version]), [
        ['locked', '1'],
        ['locked', '1'],
        ['locked', '1'],
      ])
    })

    it('a row that does not meet the precondition is precondition_failed as before', async () => {
      const outcome = await connector.write({ id: 'd', expectedVersion: '1', set: { status: 'closed' }, precondition: { status: 'locked' } })
      assert.deepEqual([outcome.kind, 'reason' in outcome ? outcome.reason : null], ['conflict', 'precondition_failed'], JSON.stringify(outcome))
    })
  })
}

/**
 * A BEFORE UPDATE trigger that rewrites a column the action sets (lowercases a status, clamps a number): MySQL refused
 * it before COMMIT, while PostgreSQL and SQLite committed the rewritten value and left the executor to halt on it
 * afterwards. Every engine now refuses it before COMMIT, naming the field, the value approved and the value kept; a
 * value only spelled otherwise (a number 1.50 for 1.5, a timestamp in another form) is written; in a window only the
 * rewritten targets are refused.
 */
const REWRITE = {
  sqlite: [
    'create table ledger (id text primary key, status text, n real, at text, version integer not null)',
    `create trigger lower_status after update of status on ledger when new.status <> lower(new.status) and new.id <> 'keep'
       begin update ledger set status = lower(new.status) where id = new.id; end`,
    'create trigger clamp_n after update of n on ledger when new.n > 100 begin update ledger set n = 100 where id = new.id; end',
  ],
  postgres: [
    'create table ledger (id text primary key, status text, n numeric(10,2), at timestamptz, version integer not null)',
    `create function rewrite() returns trigger language plpgsql as $$
       begin
         if new.id <> 'keep' then new.status := lower(new.status); end if;
         if new.n > 100 then new.n := 100; end if;
         return new;
       end $$`,
    'create trigger rewrite before update on ledger for each row execute function rewrite()',
  ],
} as const
const REWRITE_FIELDS = { id: 'string', status: 'string', n: 'number', at: 'timestamp', version: 'integer' } as const

for (const kind of KINDS) {
  describe(`sql on ${kind}: a trigger rewrites a field the write sets`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    const held = async (id: string) => {
      const read = await connector.readByIds([id])
      const record = read.records.get(id)
      return [record?.fields.status, Number(record?.fields.n), record?.version]
    }
    before(async () => {
      upstream = await createUpstream(kind)
      for (const statement of REWRITE[kind]) await upstream.exec(statement)
      for (const id of ['a', 'b', 'c', 'd', 'keep', 'e', 'f']) await upstream.exec('insert into ledger (id, status, n, version) values (?, ?, ?, ?)', [id, 'open', 1, 1])
      connector = ledgerConnector(upstream.url, REWRITE_FIELDS)
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a value lowercased is refused naming the field and both values; the row as it was', async () => {
      const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'Paused' }, precondition: {} })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', /column "status" of record "a" would hold "paused" where "Paused" was asked.*rolled back, nothing was written/)
      assert.deepEqual(await held('a'), ['open', 1, '1'])
    })

    it('a number clamped is refused; one only spelled otherwise (1.50, a timestamp) is written', async () => {
      const clamped = await connector.write({ id: 'b', expectedVersion: '1', set: { n: 250 }, precondition: {} })
      assert.equal(clamped.kind, 'rejected', JSON.stringify(clamped))
      assert.match(clamped.kind === 'rejected' ? clamped.message : '', /column "n" of record "b" would hold 100 where 250 was asked/)
      assert.deepEqual(await held('b'), ['open', 1, '1'])
      const same = await connector.write({ id: 'c', expectedVersion: '1', set: { n: 1.5, at: '2024-01-01T02:00:00+02:00' }, precondition: {} })
      assert.equal(same.kind, 'written', JSON.stringify(same))
      assert.deepEqual(await held('c'), ['open', 1.5, '2'])
    })

    it('in a window only the rewritten targets are refused; the others are written', async () => {
      const outcomes = await connector.writeWindow!(['d', 'keep', 'e'].map((id) => ({ id, expectedVersion: '1', set: { status: 'Paused' }, precondition: {} })))
      assert.deepEqual(outcomes.map((o) => o.kind), ['rejected', 'written', 'rejected'], JSON.stringify(outcomes))
      assert.deepEqual([await held('d'), await held('keep'), await held('e')], [['open', 1, '1'], ['Paused', 1, '2'], ['open', 1, '1']])
    })
  })
}
