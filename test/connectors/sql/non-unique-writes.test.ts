import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import mysql from 'mysql2/promise'
import pg from 'pg'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, ledgerConnector, SQL_KINDS, type Upstream } from './support/upstream.js'

/**
 * An id column no key proves unique, whose ids were distinct when the selection froze: a row inserted since
 * under a target's id (same version, meeting the precondition) matches the conditional UPDATE too. On SQLite
 * and PostgreSQL, without an UPDATE trigger, the UPDATE … RETURNING committed on its own, so both rows were
 * written, the one no reviewer approved included, and only then reported (`unknown`, "every one of them was
 * written"). Where the id is not proven unique, the UPDATE and the read of what it wrote are one transaction:
 * more than one row for the id is refused and rolled back, nothing written (MySQL already wrote so).
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' } as const

for (const kind of SQL_KINDS) {
  describe(`sql on ${kind}: a write to an id another row took since the selection`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(`create table ledger (id varchar(20), status varchar(20), version integer not null)${kind === 'mysql' ? ' engine=InnoDB' : ''}`)
      for (const id of ['a', 'b', 'c']) await upstream.exec('insert into ledger values (?, ?, ?)', [id, 'active', 1])
      connector = ledgerConnector(upstream.url, FIELDS)
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a single write writes neither row', async () => {
      await upstream.exec('insert into ledger values (?, ?, ?)', ['a', 'active', 1])
      const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { status: 'cancelled' }, precondition: { status: 'active' } })
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
      assert.match(outcome.kind === 'rejected' ? outcome.message : '', /2 rows of .*ledger have id "a": the id is not unique.*nothing was written/)
      assert.equal(await countOf(upstream, kind, "status = 'cancelled'"), 0, 'no row was written')
    })

    if (kind !== 'mysql')
      it('a window writes neither row of the repeated id, and the other record as alone', async () => {
        await upstream.exec('insert into ledger values (?, ?, ?)', ['b', 'active', 1])
        const outcomes = await connector.writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: '1', set: { status: 'cancelled' }, precondition: { status: 'active' } })))
        assert.equal(outcomes[0]!.kind, 'rejected', JSON.stringify(outcomes[0]))
        assert.equal(outcomes[1]!.kind, 'written', JSON.stringify(outcomes[1]))
        assert.equal(await countOf(upstream, kind, "status = 'cancelled' and id = 'b'"), 0, 'neither row of "b" was written')
        assert.equal(await countOf(upstream, kind, "status = 'cancelled' and id = 'c'"), 1)
      })
  })
}

/** Rows of ledger matching `where`, counted by the engine's own driver (a walk is refused on the repeated id). */
async function countOf(upstream: Upstream, kind: string, where: string): Promise<number> {
  const statement = `select count(*) as n from ledger where ${where}`
  if (kind === 'sqlite') {
    const db = new BetterSqlite3(upstream.url.slice('sqlite:'.length), { readonly: true })
    try {
      return Number((db.prepare(statement).get() as { n: number }).n)
    } finally {
      db.close()
    }
  }
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: upstream.url })
    await client.connect()
    try {
      return Number((await client.query(statement)).rows[0].n)
    } finally {
      await client.end()
    }
  }
  const conn = await mysql.createConnection(upstream.url)
  try {
    return Number(((await conn.query(statement))[0] as { n: number }[])[0]!.n)
  } finally {
    await conn.end()
  }
}
