import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * A table whose UPDATE triggers change the row after the UPDATE: a rule that refuses to let a record be
 * cancelled and puts it back, one that puts the version back. SQLite's and PostgreSQL's RETURNING show the row
 * before AFTER triggers run, so a write was reported `written` with status "cancelled" (and the effect check
 * passed on that answer) while the row held "active". A write's answer is now the row as the statement left
 * it, read back in the UPDATE's transaction; a version a trigger put back is refused and rolled back.
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

    it('a single write answers the row as the trigger left it', async () => {
      const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })
      const row = (await rows()).get('a')!
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      assert.equal(outcome.kind === 'written' && outcome.record?.fields.status, row.status, `the answer says ${JSON.stringify(outcome)}, the row holds ${JSON.stringify(row)}`)
      assert.equal(row.status, 'active')
      assert.equal(outcome.kind === 'written' && outcome.record?.version, '2')
    })

    it('a window answers each row as the trigger left it', async () => {
      const outcomes = await connector.writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: '1', set: { status: 'cancelled' }, precondition: {} })))
      const table = await rows()
      for (const [i, id] of ['b', 'c'].entries()) {
        const outcome = outcomes[i]!
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'written' && outcome.record?.fields.status, table.get(id)!.status, `${id}: the answer says ${JSON.stringify(outcome)}, the row holds ${JSON.stringify(table.get(id))}`)
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
